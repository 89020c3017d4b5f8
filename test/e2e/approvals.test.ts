/**
 * Human approval of action agents' mutating calls (#30), through every service with a
 * scripted LLM and a real MCP server (server-everything, whose get-sum is made mutating by
 * config). The call becomes an action request; while it is pending the execution is parked
 * (no runner holds it); `POST /api/v1/actions/:id/approve|deny` or the request's timeout
 * decides it and resumes the execution; an approved call runs once (mcp-gateway claims the
 * request first), and every step is in the request's append-only audit record.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import {
  type Action,
  type ActionAuditEntry,
  type ActionList,
  type LLMInteractionDetail,
  TERMINAL_SESSION_STATUSES,
  type TraceListResponse,
} from "@tarsy/contracts";
import { serviceBundle } from "@tarsy/stack";
import { until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Scrapes, scrapeProcesses, serviceTotal } from "./prometheus.ts";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, EVERYTHING_ENV, ROOT } from "./support.ts";

const DIR = resolve(ROOT, "test/e2e/testdata/approvals");
/** Whoever submits the alerts (`submitAlert`): four eyes keeps them from approving. */
const SUBMITTER = "e2e";
const APPROVER = "alice@example.com";

let sys: E2E;
let sql: postgres.Sql;

beforeAll(async () => {
  sys = await bootSystem({
    configDir: DIR,
    llmScriptPath: resolve(DIR, "llm-script.yaml"),
    env: EVERYTHING_ENV,
  });
  sql = postgres(sys.database.url, { max: 2, onnotice: () => {} });
}, 120_000);
afterAll(async () => {
  saveLogs(sys, "approvals");
  await sql?.end();
  await sys?.stop();
});

const submit = (alertType: string, name: string) => submitAlert(sys, alertType, { case: name });

/** The session's one action request, once the agent made it. */
const requested = (sessionId: string): Promise<Action> =>
  until(
    async () => {
      const r = await sys.api<ActionList>(`/api/v1/actions?session_id=${sessionId}`);
      expect(r.status).toBe(200);
      return r.body.actions[0] ?? null;
    },
    { what: `an action request of session ${sessionId}`, timeoutMs: 60_000 },
  );

const decide = (id: string, verb: "approve" | "deny", user: string, comment?: string) =>
  sys.api<Action & { error?: { code: string; message: string } }>(`/api/v1/actions/${id}/${verb}`, {
    method: "POST",
    headers: { "x-forwarded-user": user },
    ...(comment === undefined ? {} : { body: JSON.stringify({ comment }) }),
  });

const action = async (id: string): Promise<Action> => {
  const r = await sys.api<Action>(`/api/v1/actions/${id}`);
  expect(r.status).toBe(200);
  return r.body;
};

const audit = async (id: string): Promise<ActionAuditEntry[]> => {
  const r = await sys.api<{ entries: ActionAuditEntry[] }>(`/api/v1/actions/${id}/audit`);
  expect(r.status).toBe(200);
  return r.body.entries;
};

/** What the agent's last LLM call was told its tool calls returned. */
const toolAnswers = async (sessionId: string): Promise<string[]> => {
  const trace = (await sys.api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`)).body;
  const execution = trace.stages.flatMap((s) => s.executions)[0];
  const last = execution?.llm_interactions.at(-1);
  const detail = await sys.api<LLMInteractionDetail>(
    `/api/v1/sessions/${sessionId}/trace/llm/${last?.id}`,
  );
  return detail.body.conversation.filter((m) => m.role === "tool").map((m) => m.content);
};

/** The `tarsy` CLI (its sources as one bundle) against this system, as `user`. */
async function tarsy(args: string[], user: string) {
  const main = await serviceBundle(resolve(ROOT, "packages/cli"));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    execFile(
      process.execPath,
      [main, ...args],
      {
        env: { PATH: process.env.PATH ?? "", TARSY_API_URL: sys.stack.apiUrl, TARSY_USER: user },
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
        if (err && code === null) fail(err);
        else done({ code, stdout, stderr });
      },
    );
  });
}

/** How many times the MCP server was sent get-sum for the session. */
const sumCalls = async (sessionId: string): Promise<number> => {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM mcp_interactions
    WHERE session_id = ${sessionId} AND interaction_type = 'tool_call' AND tool_name = 'get-sum'`;
  return row?.n ?? -1;
};

const scrape = (): Promise<Scrapes> => scrapeProcesses(sys.stack.metricsUrls);

/** How much a series moved from `before` to now over the processes of `service`. */
async function metricDeltas(before: Scrapes) {
  const after = await scrape();
  return (service: string, name: string, labels: Record<string, string>) =>
    serviceTotal(after, service, name, labels) - serviceTotal(before, service, name, labels);
}

const suspended = async (executionId: string): Promise<boolean> => {
  const [row] = await sql<{ suspended_at: Date | null }[]>`
    SELECT suspended_at FROM agent_executions WHERE id = ${executionId}`;
  return row?.suspended_at != null;
};

describe("Approvals", () => {
  it("a granted call: parked while pending, four eyes, approved once, run once, audited", async () => {
    const metricsBefore = await scrape();
    const id = await submit("ApproveMe", "case-granted");
    const pending = await requested(id);
    expect(pending).toMatchObject({
      session_id: id,
      agent_name: "Restarter",
      tool_name: "everything.get-sum",
      arguments: { a: 2, b: 3 },
      approval_mode: "required",
      status: "pending",
      requested_by: SUBMITTER,
      call_status: "not_started",
    });
    // The agent's stated reason and evidence, masked for people.
    expect(pending.reason).toContain("OOM-killed 14 times");
    expect(pending.reason).toMatch(/password=\[MASKED_[A-Z_]+\]/);
    expect(pending.reason).not.toContain("hunter2secret");
    const expiresIn = Date.parse(pending.expires_at ?? "") - Date.parse(pending.requested_at);
    expect(expiresIn).toBeGreaterThan(9 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(10 * 60_000);
    // Its dry-run form (echo, by config) ran when approval was asked: what it said is on the
    // request, and it is in the trace; the call itself was not sent.
    expect(pending.dry_run).toEqual({ status: "succeeded", result: "Echo: dry run: would sum" });
    const dryRuns = await sql<{ tool_name: string; dry_run_of: string }[]>`
      SELECT tool_name, tool_result->>'dry_run_of' AS dry_run_of FROM mcp_interactions
      WHERE session_id = ${id} AND interaction_type = 'tool_call' AND tool_name = 'echo'`;
    expect(dryRuns).toEqual([{ tool_name: "echo", dry_run_of: "everything.get-sum" }]);
    // No runner holds the execution while it waits; nothing was sent to the server.
    await until(() => suspended(pending.execution_id), { what: "the execution parked" });
    expect((await waitStatus(sys, id, ["in_progress"], 5_000)).status).toBe("in_progress");
    expect(await sumCalls(id)).toBe(0);
    const listed = await sys.api<ActionList>("/api/v1/actions?status=pending");
    expect(listed.body.actions.map((a) => a.id)).toContain(pending.id);

    // Four eyes: the submitter may not approve; the request stays pending.
    const own = await decide(pending.id, "approve", SUBMITTER);
    expect(own.status).toBe(403);
    expect(own.body.error?.code).toBe("four_eyes");
    expect((await action(pending.id)).status).toBe("pending");

    const approved = await decide(pending.id, "approve", APPROVER, "go ahead");
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      status: "approved",
      decided_by: APPROVER,
      comment: "go ahead",
    });
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 60_000);
    expect(done.status).toBe("completed");
    expect(await toolAnswers(id)).toEqual([expect.stringContaining("The sum of 2 and 3 is 5.")]);
    expect(await sumCalls(id)).toBe(1);
    const after = await action(pending.id);
    expect(after.call_status).toBe("succeeded");
    expect(after.result).toContain("The sum of 2 and 3 is 5.");
    expect(after.call_started_at).not.toBeNull();
    expect(after.call_ended_at).not.toBeNull();

    // Decided once.
    const again = await decide(pending.id, "deny", APPROVER);
    expect(again.status).toBe(409);
    expect(again.body.error?.code).toBe("action_decided");

    const entries = await audit(pending.id);
    expect(entries.map((e) => e.event)).toEqual([
      "requested",
      "approved",
      "call_started",
      "call_succeeded",
    ]);
    expect(entries.map((e) => e.actor)).toEqual([
      "agent:Restarter",
      APPROVER,
      expect.stringMatching(/^mcp-gateway:/),
      expect.stringMatching(/^mcp-gateway:/),
    ]);
    expect(entries[0]?.detail).toMatchObject({ arguments: { a: 2, b: 3 } });
    // The record cannot be changed or removed.
    await expect(sql`UPDATE action_audit SET actor = 'someone else'`).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`DELETE FROM action_audit`).rejects.toThrow(/append-only/);

    // Metrics: one request (by the runner), one approval (by the API), timed from the request.
    const moved = await metricDeltas(metricsBefore);
    const requests = "tarsy_action_requests_total";
    expect(moved("agent-runner", requests, { event: "requested", mode: "required" })).toBe(1);
    expect(moved("ingest-api", requests, { event: "approved", mode: "required" })).toBe(1);
    expect(moved("ingest-api", requests, { event: "denied" })).toBe(0);
    const decision = "tarsy_action_decision_seconds";
    expect(moved("ingest-api", `${decision}_count`, { decision: "approved" })).toBe(1);
    const waited =
      (Date.parse(approved.body.decided_at ?? "") - Date.parse(pending.requested_at)) / 1_000;
    expect(moved("ingest-api", `${decision}_sum`, { decision: "approved" })).toBeCloseTo(waited, 2);
  });

  it("a denied call is never made; the agent is told who denied it and why, and goes on", async () => {
    const metricsBefore = await scrape();
    const id = await submit("ApproveMe", "case-denied");
    const pending = await requested(id);
    // Through the CLI: the pending request is listed, and denied with a comment. Four eyes
    // restricts approving only: the submitter may deny.
    const listed = await tarsy(["action", "list", "--session", id], SUBMITTER);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(pending.id);
    expect(listed.stdout).toContain("everything.get-sum");
    const denied = await tarsy(
      ["action", "deny", pending.id, "-m", "not during the change freeze"],
      SUBMITTER,
    );
    expect([denied.code, denied.stdout]).toEqual([
      0,
      `action ${pending.id}: denied by ${SUBMITTER}\n`,
    ]);
    const twice = await tarsy(["action", "approve", pending.id], APPROVER);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("action_decided");
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 60_000);
    expect(done.status).toBe("completed");
    const [answer] = await toolAnswers(id);
    expect(answer).toContain("NOT made");
    expect(answer).toContain(`(${SUBMITTER}) denied it`);
    expect(answer).toContain("not during the change freeze");
    expect(await sumCalls(id)).toBe(0);
    expect((await action(pending.id)).call_status).toBe("not_started");
    expect((await audit(pending.id)).map((e) => [e.event, e.actor])).toEqual([
      ["requested", "agent:Restarter"],
      ["denied", SUBMITTER],
    ]);
    const moved = await metricDeltas(metricsBefore);
    expect(moved("ingest-api", "tarsy_action_requests_total", { event: "denied" })).toBe(1);
    expect(moved("ingest-api", "tarsy_action_decision_seconds_count", { decision: "denied" })).toBe(
      1,
    );
  });

  it("a request nobody decides in time counts as denied (timeout)", async () => {
    const metricsBefore = await scrape();
    const id = await submit("TimesOut", "case-timeout");
    const pending = await requested(id);
    const timeoutMs = Date.parse(pending.expires_at ?? "") - Date.parse(pending.requested_at);
    expect(timeoutMs).toBeGreaterThan(2_500);
    expect(timeoutMs).toBeLessThanOrEqual(3_500);
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 60_000);
    expect(done.status).toBe("completed");
    const expired = await action(pending.id);
    expect(expired).toMatchObject({
      status: "expired",
      decided_by: "timeout",
      call_status: "not_started",
    });
    const [answer] = await toolAnswers(id);
    expect(answer).toContain("NOT made");
    expect(answer).toContain("timed out");
    expect(await sumCalls(id)).toBe(0);
    expect((await decide(pending.id, "approve", APPROVER)).status).toBe(409);
    // Metrics: the orchestrator's sweep expired it, after about its timeout.
    const moved = await metricDeltas(metricsBefore);
    expect(moved("orchestrator", "tarsy_action_requests_total", { event: "expired" })).toBe(1);
    expect(moved("ingest-api", "tarsy_action_requests_total", { event: "approved" })).toBe(0);
    const decision = "tarsy_action_decision_seconds";
    expect(moved("orchestrator", `${decision}_count`, { decision: "expired" })).toBe(1);
    expect(
      moved("orchestrator", `${decision}_sum`, { decision: "expired" }),
    ).toBeGreaterThanOrEqual(timeoutMs / 1_000 - 0.01);
  });

  it("survives kill -9 of every runner, gateway, orchestrator and relay while the request is pending", async () => {
    const id = await submit("ApproveMe", "case-killed");
    const pending = await requested(id);
    await until(() => suspended(pending.execution_id), { what: "the execution parked" });
    for (const name of ["agent-runner", "mcp-gateway", "orchestrator", "stream-relay"]) {
      for (const p of sys.stack.processes.filter((p) => p.name.startsWith(`${name}-`))) {
        await p.kill();
      }
    }
    for (const name of ["mcp-gateway", "orchestrator", "stream-relay", "agent-runner"] as const) {
      await sys.stack.start(name);
    }
    expect((await action(pending.id)).status).toBe("pending");
    expect((await decide(pending.id, "approve", APPROVER)).status).toBe(200);
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000);
    expect(done.status).toBe("completed");
    expect(await toolAnswers(id)).toEqual([expect.stringContaining("The sum of 20 and 22 is 42.")]);
    expect(await sumCalls(id)).toBe(1);
    expect((await action(pending.id)).call_status).toBe("succeeded");
  }, 180_000);
});
