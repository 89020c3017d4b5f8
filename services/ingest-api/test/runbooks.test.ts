import { readFileSync } from "node:fs";
import { RunbooksResponseSchema, SystemWarningsResponseSchema } from "@tarsy/contracts";
import { getSession, listAlertSessions } from "@tarsy/db";
import { countStoredRows } from "@tarsy/db/testing";
import { createRunbookClient, type RunbookSettingsInput } from "@tarsy/runbooks";
import { type FakeGithub, startFakeGithub } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  conforms,
  type ErrorBody,
  eventually,
  FIXTURE_WEBHOOK,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

let h: Harness;
let gh: FakeGithub;
beforeAll(async () => {
  [h, gh] = await Promise.all([
    startHarness({ settings: { alertmanager: { runbookAnnotation: "playbook" } } }),
    startFakeGithub({
      "acme/runbooks/main/sre/oom.md": "# OOM",
      "acme/runbooks/main/sre/k8s/crashloop.md": "# CrashLoop",
      "acme/runbooks/main/sre/k8s/readme.txt": "not listed",
      "acme/runbooks/main/sre/private/secret.md": "# behind a failing directory",
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.close(), gh?.close()]);
});

/** ingest-api's runbook client pointed at the loopback GitHub. */
function useRunbooks(overrides: Partial<RunbookSettingsInput> = {}) {
  h.deps.runbooks = createRunbookClient({
    allowedDomains: ["github.com", "raw.githubusercontent.com", "127.0.0.1"],
    allowPrivateAddresses: true,
    cacheTtlMs: 60_000,
    githubApiUrl: gh.url,
    repoUrl: `${gh.url}/acme/runbooks/tree/main/sre`,
    token: "ghp_listing_token",
    ...overrides,
  });
}

const submit = (body: unknown) =>
  request<{ session_id: string } & ErrorBody>(`${h.url}/api/v1/alerts`, { method: "POST", body });

describe("runbook URL on submit", () => {
  it("refuses a URL outside the allowlist with 400 invalid runbook URL and stores nothing", async () => {
    useRunbooks();
    const sessionsBefore = (await countStoredRows(h.db.prisma)).sessions;
    const announcedBefore = h.received.sessionSubmitted.length;
    const refused = await submit({
      data: { pod: "api-1" },
      runbook: "https://evil.example.com/runbook.md",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: "validation_failed",
      message: "invalid runbook URL",
      details: {
        fields: [
          {
            path: "runbook",
            message:
              "host evil.example.com is not an allowed runbook domain (allowed: github.com, raw.githubusercontent.com, 127.0.0.1)",
          },
        ],
      },
    });
    // An accepted alert after it is announced to the orchestrator; the refused one never was.
    const accepted = await submit({
      data: { pod: "api-1" },
      runbook: "https://www.github.com/acme/runbooks/blob/main/sre/oom.md",
    });
    expect(accepted.status).toBe(202);
    await eventually(() =>
      h.received.sessionSubmitted.some((m) => m.session_id === accepted.body.session_id),
    );
    expect((await countStoredRows(h.db.prisma)).sessions).toBe(sessionsBefore + 1);
    expect(h.received.sessionSubmitted.length).toBe(announcedBefore + 1);
    const row = await getSession(h.db.prisma, accepted.body.session_id);
    expect(row?.runbookUrl).toBe("https://www.github.com/acme/runbooks/blob/main/sre/oom.md");
  });
});

describe("GET /api/v1/runbooks", () => {
  it("lists the .md files of repo_url, skipping a subdirectory that fails", async () => {
    gh.failingDirs.add("acme/runbooks/main/sre/private");
    useRunbooks();
    const res = await request<string[]>(`${h.url}/api/v1/runbooks`);
    expect(res.status).toBe(200);
    conforms(RunbooksResponseSchema, res.body);
    expect(res.body).toEqual([
      `${gh.url}/acme/runbooks/blob/main/sre/k8s/crashloop.md`,
      `${gh.url}/acme/runbooks/blob/main/sre/oom.md`,
    ]);
    const calls = gh.requests.filter((r) => r.path.startsWith("/repos/"));
    expect(calls.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        "/repos/acme/runbooks/contents/sre?ref=main",
        "/repos/acme/runbooks/contents/sre/k8s?ref=main",
        "/repos/acme/runbooks/contents/sre/private?ref=main",
      ]),
    );
    expect(calls.every((r) => r.authorization === "Bearer ghp_listing_token")).toBe(true);
  });

  it("answers [] when the repository cannot be listed, and when none is configured", async () => {
    useRunbooks({ repoUrl: `${gh.url}/acme/missing/tree/main/sre` });
    const failing = await request<string[]>(`${h.url}/api/v1/runbooks`);
    expect(failing).toMatchObject({ status: 200, body: [] });
    expect(gh.requests.some((r) => r.path.startsWith("/repos/acme/missing/contents/sre"))).toBe(
      true,
    );
    useRunbooks({ repoUrl: "" });
    expect(await request<string[]>(`${h.url}/api/v1/runbooks`)).toMatchObject({
      status: 200,
      body: [],
    });
  });
});

describe("system warnings", () => {
  const warnings = async () => {
    const res = await request<{ warnings: { category: string; message: string }[] }>(
      `${h.url}/api/v1/system/warnings`,
    );
    conforms(SystemWarningsResponseSchema, res.body);
    return res.body.warnings;
  };

  it("warn when repo_url is set without a GitHub token, not otherwise", async () => {
    useRunbooks({ token: undefined });
    expect(await warnings()).toEqual([
      expect.objectContaining({ category: "runbook", message: "GitHub token not configured" }),
    ]);
    const health = await request<{ warnings: { category: string }[] }>(`${h.url}/health`);
    expect(health.body.warnings.map((w) => w.category)).toContain("runbook");
    useRunbooks();
    expect(await warnings()).toEqual([]);
    useRunbooks({ token: undefined, repoUrl: "" });
    expect(await warnings()).toEqual([]);
  });
});

describe("Alertmanager runbook annotation", () => {
  it("the configured annotation becomes the session's runbook when its host is allowed", async () => {
    useRunbooks();
    const hook = JSON.parse(readFileSync(FIXTURE_WEBHOOK, "utf8")) as {
      groupKey: string;
      alerts: { fingerprint: string; annotations: Record<string, string> }[];
    };
    const [first, second] = hook.alerts;
    if (!first || !second) throw new Error("fixture changed");
    first.fingerprint = "rb-allowed";
    first.annotations = { playbook: `${gh.url}/acme/runbooks/blob/main/sre/oom.md` };
    second.fingerprint = "rb-foreign";
    second.annotations = {
      playbook: "https://evil.example.com/x.md",
      runbook_url: "https://github.com/acme/runbooks/blob/main/not-the-configured-key.md",
    };
    hook.groupKey = "rb-group";
    const res = await request<{ sessions_created: { session_id: string }[] }>(
      `${h.url}/api/v1/alerts/alertmanager`,
      { method: "POST", body: hook },
    );
    expect(res.status).toBe(200);
    expect(res.body.sessions_created).toHaveLength(2);
    const rows = (
      await Promise.all(
        ["rb-allowed", "rb-foreign"].map((fp) =>
          listAlertSessions(h.db.prisma, { alertFingerprint: fp }),
        ),
      )
    ).flat();
    const byFp = new Map(rows.map((r) => [r.alertFingerprint, r.runbookUrl]));
    expect(byFp.get("rb-allowed")).toBe(`${gh.url}/acme/runbooks/blob/main/sre/oom.md`);
    expect(byFp.get("rb-foreign")).toBeNull();
  });
});
