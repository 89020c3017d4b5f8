import { createDb, createSession, transitionSessionStatus } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootSystem, type System, tarsy } from "./support.ts";

/**
 * Session labels in the CLI against the whole system booted as processes (the demo
 * configuration: the built-in label map), on sessions ended through packages/db as the
 * orchestrator ends them: labelled noise, labelled action, and unlabelled.
 */
describe("tarsy session list and show: labels", () => {
  let sys: System;
  let noise = "";
  let action = "";
  let unlabelled = "";

  beforeAll(async () => {
    sys = await bootSystem();
    const db = createDb({ url: sys.database.url });
    try {
      const ended = async (labels: string[] | null, i: number) => {
        const { session } = await createSession(db.prisma, {
          project: "default",
          alertData: `labels ${i}`,
          alertType: "PodCrashLooping",
          chainId: "k8s-chain",
        });
        await transitionSessionStatus(db.prisma, session.id, ["pending"], "in_progress");
        await transitionSessionStatus(db.prisma, session.id, ["in_progress"], "completed", {
          executiveSummary: `summary ${i}`,
          ...(labels && { labels }),
          completedAt: new Date(Date.now() + i),
        });
        return session.id;
      };
      noise = await ended(["noise"], 0);
      action = await ended(["action"], 1);
      unlabelled = await ended(null, 2);
    } finally {
      await db.close();
    }
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
  }, 60_000);

  it("lists labels in a LABELS column and filters on one with --label", async () => {
    const all = await tarsy(["session", "list"], { env: sys.env });
    expect(all.code).toBe(0);
    const header = all.stdout.split("\n")[0] ?? "";
    expect(header).toMatch(/DURATION\s+LABELS$/);
    const row = (id: string) => all.stdout.split("\n").find((line) => line.startsWith(id)) ?? "";
    expect(row(noise)).toMatch(/\snoise$/);
    expect(row(action)).toMatch(/\saction$/);
    expect(row(unlabelled)).not.toMatch(/noise|action/);

    const only = await tarsy(["session", "list", "--label", "noise"], { env: sys.env });
    expect(only.stderr).toBe("");
    expect(only.code).toBe(0);
    expect(only.stdout).toContain(noise);
    expect(only.stdout).not.toContain(action);
    expect(only.stdout).toContain("page 1 of 1, 1 session\n");
  });

  it("says why a label filter is refused", async () => {
    const unknown = await tarsy(["session", "list", "--label", "page"], { env: sys.env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('label "page" is not in any configured label map');
    const malformed = await tarsy(["session", "list", "-l", "no labels"], { env: sys.env });
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toContain("--label: must start with a letter");
  });

  it("shows a session's labels; an unlabelled session has no Labels line", async () => {
    const shown = await tarsy(["session", "show", noise], { env: sys.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("\n  Labels:      noise\n");
    const none = await tarsy(["session", "show", unlabelled], { env: sys.env });
    expect(none.code).toBe(0);
    expect(none.stdout).not.toContain("Labels:");
  });
});
