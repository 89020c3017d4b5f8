import { spawn } from "node:child_process";
import { resolve } from "node:path";
import {
  type LLMInteractionDetail,
  type SessionDetail,
  TERMINAL_SESSION_STATUSES,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import { type FakeGithub, startFakeGithub, until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ask, saveLogs, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/runbooks");
const CLI = resolve(ROOT, "packages/cli/bin/tarsy.mjs");
const TOKEN = "ghp_e2eRunbookToken0123456789";

const OOM = "# OOM runbook\n\n1. RUNBOOK-STEP: compare the heap with the memory limit.";
const CRASH = "# CrashLoop runbook\n\n1. CRASHLOOP-STEP: read the previous container's logs.";

/**
 * Runbooks end to end: every service a process, runbooks from a loopback GitHub (node:http),
 * the scripted LLM. What the agents were sent is read through the trace API.
 */
describe("e2e: Runbooks", () => {
  let sys: E2E;
  let gh: FakeGithub;
  let sql: postgres.Sql;
  const api = <T>(path: string, init?: RequestInit) => sys.api<T>(path, init);

  /** The user-visible text of every LLM request of a session, by agent. */
  async function requestsOf(sessionId: string) {
    const trace = (await api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`)).body;
    const items = trace.stages.flatMap((s) =>
      s.executions.flatMap((e) =>
        e.llm_interactions.map((i) => ({ agent: e.agent_name, id: i.id })),
      ),
    );
    return Promise.all(
      items.map(async ({ agent, id }) => {
        const detail = (
          await api<LLMInteractionDetail>(`/api/v1/sessions/${sessionId}/trace/llm/${id}`)
        ).body;
        const user = detail.conversation.find((m) => m.role === "user")?.content ?? "";
        return { agent, type: detail.interaction_type, user };
      }),
    );
  }

  const runbookIn = (text: string) =>
    /## Runbook Content\n\n<!-- RUNBOOK START -->\n<untrusted_data source="runbook">\n([\s\S]*?)\n<\/untrusted_data>\n<!-- RUNBOOK END -->/.exec(
      text,
    )?.[1];

  async function submit(body: Record<string, unknown>) {
    return api<{ session_id: string; error?: { code: string; message: string } }>(
      "/api/v1/alerts",
      { method: "POST", body: JSON.stringify(body) },
    );
  }

  beforeAll(async () => {
    gh = await startFakeGithub({
      "acme/runbooks/main/sre/oom.md": OOM,
      "acme/runbooks/main/sre/k8s/crashloop.md": CRASH,
      "acme/runbooks/main/sre/broken/hidden.md": "# in a directory the API fails to list",
    });
    gh.failingDirs.add("acme/runbooks/main/sre/broken");
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      env: { FAKE_GITHUB_URL: gh.url, GITHUB_TOKEN: TOKEN },
    });
    sql = postgres(sys.database.url, { max: 1, onnotice: () => {} });
  }, 180_000);

  afterAll(async () => {
    saveLogs(sys, "runbooks");
    await sql?.end();
    await sys?.stop();
    await gh?.close();
  }, 60_000);

  it("puts the runbook between the markers in every agent, synthesis and chat request of the session", async () => {
    const listed = await api<string[]>("/api/v1/runbooks");
    expect(listed.body).toEqual([
      `${gh.url}/acme/runbooks/blob/main/sre/k8s/crashloop.md`,
      `${gh.url}/acme/runbooks/blob/main/sre/oom.md`,
    ]);
    const url = listed.body[1] ?? "";
    const res = await submit({
      alert_type: "Runbooked",
      data: { pod: "payments-api" },
      runbook: url,
    });
    expect(res.status).toBe(202);
    const id = res.body.session_id;
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000);
    expect(done.status).toBe("completed");
    const chat = await ask(sys, id, "What is the first step?");
    await chatTurnEnded(chat.id, id);

    const requests = await requestsOf(id);
    const agents = requests.map((r) => r.agent).sort();
    expect(agents).toEqual(
      [
        "AgentA",
        "AgentB",
        "AgentC-1",
        "AgentC-2",
        "ChatAgent",
        "SynthesisAgent",
        "SynthesisAgent",
      ].sort(),
    );
    for (const r of requests) expect(runbookIn(r.user), `${r.agent} (${r.type})`).toBe(OOM);
    // Resolved once for the session: only the two first-stage agents, starting together on
    // the two runners before either had stored it, may fetch; the syntheses, the replicas and
    // the chat turn read the stored text. Every fetch carried the token.
    const fetches = gh.requests.filter((r) => r.path === "/acme/runbooks/blob/main/sre/oom.md");
    expect(fetches.length).toBeGreaterThanOrEqual(1);
    expect(fetches.length).toBeLessThanOrEqual(2);
    expect(new Set(fetches.map((r) => r.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));

    const detail = (await api<SessionDetail>(`/api/v1/sessions/${id}`)).body;
    expect(detail.runbook_url).toBe(url);
    expect(detail.runbook).toMatchObject({ source: "fetched", content: OOM, error: null });
  }, 150_000);

  const chatTurnEnded = (stageId: string, sessionId: string) =>
    until(
      async () => {
        const detail = (await api<SessionDetail>(`/api/v1/sessions/${sessionId}`)).body;
        const stage = detail.stages.find((s) => s.id === stageId);
        return stage && ["completed", "failed"].includes(stage.status) && stage; // wire-literal: the turn ended on its own
      },
      { what: "the chat turn to finish", timeoutMs: 30_000, intervalMs: 100 },
    );

  it("refuses a runbook on a host outside the allowlist: 400, no session, no LLM call", async () => {
    const sessions = async () => Number((await sql`SELECT count(*) FROM alert_sessions`)[0]?.count);
    const llmCalls = async () =>
      Number((await sql`SELECT count(*) FROM llm_interactions`)[0]?.count);
    const [sessionsBefore, callsBefore] = [await sessions(), await llmCalls()];
    const refused = await submit({
      alert_type: "Quick",
      data: { pod: "x" },
      runbook: "https://evil.example.com/runbook.md",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: "validation_failed",
      message: "invalid runbook URL",
    });
    // A valid alert afterwards runs to the end: only its own session and LLM call appear.
    const ok = await submit({ alert_type: "Quick", data: { pod: "y" } });
    await waitStatus(sys, ok.body.session_id, ["completed"], 60_000);
    expect(await sessions()).toBe(sessionsBefore + 1);
    expect(await llmCalls()).toBe(callsBefore + 2); // the agent and the executive summary
    const [quick] = await requestsOf(ok.body.session_id);
    expect(runbookIn(quick?.user ?? "")).toBe("DEFAULT-RUNBOOK: follow the generic checklist.");
  }, 90_000);

  it("falls back to defaults.runbook when the fetch fails, with a timeline note saying why", async () => {
    const url = `${gh.url}/acme/runbooks/blob/main/sre/gone.md`;
    const res = await submit({ alert_type: "Quick", data: { pod: "z" }, runbook: url });
    expect(res.status).toBe(202);
    const id = res.body.session_id;
    await waitStatus(sys, id, ["completed"], 60_000);
    const [request] = await requestsOf(id);
    expect(runbookIn(request?.user ?? "")).toBe("DEFAULT-RUNBOOK: follow the generic checklist.");
    const timeline = (await api<TimelineResponse>(`/api/v1/sessions/${id}/timeline`)).body;
    const note = timeline.events.find(
      (e) => (e.metadata as { kind?: string } | null)?.kind === "runbook_fallback",
    );
    expect(note?.content).toBe(
      `Runbook ${url} could not be fetched (GET ${url} answered 404); the default runbook (defaults.runbook) is used instead.`,
    );
    const detail = (await api<SessionDetail>(`/api/v1/sessions/${id}`)).body;
    expect(detail.runbook).toMatchObject({
      source: "default",
      content: "DEFAULT-RUNBOOK: follow the generic checklist.",
    });
    expect(detail.runbook?.error).toMatch(/answered 404/);
  }, 90_000);

  it("takes the Alertmanager runbook_url annotation into the prompt", async () => {
    const url = `${gh.url}/acme/runbooks/blob/main/sre/k8s/crashloop.md`;
    const res = await api<{ sessions_created: { session_id: string }[] }>(
      "/api/v1/alerts/alertmanager",
      {
        method: "POST",
        body: JSON.stringify({
          version: "4",
          status: "firing",
          receiver: "tarsy",
          groupKey: '{}:{alertname="Quick"}',
          groupLabels: { alertname: "Quick" },
          commonLabels: {},
          commonAnnotations: {},
          externalURL: "http://alertmanager:9093",
          truncatedAlerts: 0,
          alerts: [
            {
              status: "firing",
              labels: { alertname: "Quick", pod: "api-1" },
              annotations: { summary: "crash looping", runbook_url: url },
              startsAt: "2026-11-25T03:00:00Z",
              endsAt: "0001-01-01T00:00:00Z",
              fingerprint: "e2e-runbook-annotation",
            },
          ],
        }),
      },
    );
    expect(res.status).toBe(200);
    const id = res.body.sessions_created[0]?.session_id ?? "";
    await waitStatus(sys, id, ["completed"], 60_000);
    const [request] = await requestsOf(id);
    expect(runbookIn(request?.user ?? "")).toBe(CRASH);
  }, 90_000);

  it("tarsy alert submit --runbook reaches the agent", async () => {
    const url = `${gh.url}/acme/runbooks/blob/main/sre/oom.md`;
    const run = await tarsy(
      ["alert", "submit", "-", "--type", "Quick", "--runbook", url],
      "payments-api is out of memory\n",
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const id = run.stdout.trim();
    await waitStatus(sys, id, ["completed"], 60_000);
    const [request] = await requestsOf(id);
    expect(runbookIn(request?.user ?? "")).toBe(OOM);
    const show = await tarsy(["session", "show", id]);
    expect(show.stdout).toContain(`  Runbook:     ${url} (fetched)`);
  }, 90_000);

  /** The real `tarsy` executable, as a user at a terminal runs it. */
  function tarsy(args: string[], stdin = "") {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { PATH: process.env.PATH ?? "", TARSY_API_URL: sys.stack.apiUrl },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.on("close", (code) => done({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }
});
