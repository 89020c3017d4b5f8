import { TriageGroupResponseSchema, UpdateReviewResponseSchema } from "@tarsy/contracts";
import { createDb, createSession, transitionSessionStatus } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootSystem, type System, tarsy } from "./support.ts";

/**
 * `tarsy session review` and `tarsy triage` against the whole system booted as processes, on
 * sessions that ended (seeded through packages/db, as the orchestrator ends them).
 */
describe("tarsy session review and tarsy triage", () => {
  let sys: System;
  const ids: string[] = [];

  beforeAll(async () => {
    sys = await bootSystem();
    const db = createDb({ url: sys.database.url });
    try {
      for (let i = 0; i < 3; i++) {
        const { session } = await createSession(db.prisma, {
          project: "default",
          alertData: `review ${i}`,
          alertType: "PodCrashLooping",
          chainId: "k8s-chain",
        });
        await transitionSessionStatus(db.prisma, session.id, ["pending"], "in_progress");
        await transitionSessionStatus(db.prisma, session.id, ["in_progress"], "completed", {
          completedAt: new Date(Date.now() + i),
        });
        ids.push(session.id);
      }
    } finally {
      await db.close();
    }
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
  }, 60_000);

  const as = (user: string) => ({ ...sys.env, TARSY_USER: user });

  it("claims as the user TARSY_USER names, says each session's outcome, and exits 1 when one failed", async () => {
    const [a, b] = ids as [string, string];
    const claim = await tarsy(["session", "review", "claim", a], { env: as("alice") });
    expect(claim.stderr).toBe("");
    expect(claim.code).toBe(0);
    expect(claim.stdout).toBe(`${a}  in_progress (assignee alice)\n`);

    // bob cannot take it without --reassign; b is claimed; the exit code says one failed.
    const mixed = await tarsy(["session", "review", "claim", a, b], { env: as("bob") });
    expect(mixed.code).toBe(1);
    expect(mixed.stdout).toContain(`${a}  failed: conflict: session is claimed by alice`);
    expect(mixed.stdout).toContain(`${b}  in_progress (assignee bob)`);

    const taken = await tarsy(["session", "review", "claim", a, "--reassign", "-o", "json"], {
      env: as("bob"),
    });
    expect(taken.code).toBe(0);
    const answer = UpdateReviewResponseSchema.parse(JSON.parse(taken.stdout));
    expect(answer.results[0]?.review?.assignee).toBe("bob");

    const done = await tarsy(
      [
        "session",
        "review",
        "complete",
        a,
        "--rating",
        "accurate",
        "--action-taken",
        "rolled back",
        "--feedback",
        "spot on",
      ],
      { env: as("bob") },
    );
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(`${a}  reviewed (assignee bob, rated accurate)\n`);
  }, 60_000);

  it("refuses bad arguments before asking (exit 2): unknown action, complete without a rating, no ids", async () => {
    const [, , c] = ids as [string, string, string];
    for (const args of [
      ["session", "review", "resolve", c],
      ["session", "review", "complete", c],
      ["session", "review", "complete", c, "--rating", "great"],
      ["session", "review", "update_feedback", c],
      ["session", "review", "claim"],
      ["triage", "resolved"],
    ]) {
      const run = await tarsy(args, { env: sys.env });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).not.toBe("");
    }
    const unknown = await tarsy(
      ["session", "review", "claim", "00000000-0000-4000-8000-000000000000"],
      { env: sys.env },
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain("failed: not_found");
  }, 60_000);

  it("tarsy triage lists a group as a table, filters by assignee, and prints the API's answer as JSON", async () => {
    const [a, b, c] = ids as [string, string, string];
    const queue = await tarsy(["triage"], { env: sys.env });
    expect(queue.code).toBe(0);
    expect(queue.stdout).toMatch(/^ID\s+STATUS\s+TYPE\s+REVIEW\s+ASSIGNEE\s+RATING\s+ENDED\n/);
    expect(queue.stdout).toContain(c);
    expect(queue.stdout).not.toContain(a);
    expect(queue.stdout).toContain("needs_review: page 1 of 1, 1 session\n");

    const mine = await tarsy(["triage", "in_progress", "--assignee", "bob", "-o", "json"], {
      env: sys.env,
    });
    expect(mine.code).toBe(0);
    const group = TriageGroupResponseSchema.parse(JSON.parse(mine.stdout));
    expect(group.sessions.map((s) => s.id)).toEqual([b]);

    const reviewed = await tarsy(["triage", "reviewed"], { env: sys.env });
    expect(reviewed.stdout).toContain(a);
    expect(reviewed.stdout).toMatch(/reviewed\s+bob\s+accurate/);

    const none = await tarsy(["triage", "in_progress", "--unassigned"], { env: sys.env });
    expect(none.stdout).toBe("No sessions in in_progress.\nin_progress: page 1 of 1, 0 sessions\n");
  }, 60_000);
});
