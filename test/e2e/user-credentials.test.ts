import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import {
  type LLMInteractionDetail,
  type MCPInteractionDetail,
  type SessionDetail,
  TERMINAL_EXECUTION_STATUSES,
  TERMINAL_SESSION_STATUSES,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import { createDb, type Db } from "@tarsy/db";
import { storedUserTokensOf } from "@tarsy/db/testing";
import {
  callerTag,
  connectClient,
  type FakeSts,
  type RecordingMcpServer,
  startFakeSts,
  startRecordingMcpServer,
  type TestClient,
  until,
} from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveLogs } from "./scenario-support.ts";
import { bootSystem, dumpDatabase, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/user-credentials");
const unique = (what: string) => `${what}-${randomBytes(12).toString("hex")}`;
/** The users' own bearer tokens, as their IdP issued them and oauth2-proxy passes them on. */
const ALICE = unique("alice-oidc-access-token");
const BOB = unique("bob-oidc-access-token");
/** The MCP servers' own (shared) credentials. */
const SHARED = unique("shared-cluster-token");
const STS_SECRET = unique("sts-client-secret");

/** What oauth2-proxy (a trusted proxy on 127.0.0.1) adds to a signed-in user's request. */
const asUser = (user: string, token: string) => ({
  "x-forwarded-user": user,
  "x-forwarded-email": `${user}@example.com`,
  "x-forwarded-groups": "sres",
  authorization: `Bearer ${token}`,
});

/**
 * Per-user tool credentials (issue #29) end to end: every service a process, authorization on,
 * identity from a trusted proxy. Two MCP servers the test starts (the real MCP SDK over
 * Streamable HTTP, recording every Authorization header) with `auth.mode: token_exchange`:
 * `cluster` at a loopback STS (RFC 8693) that answers `exchanged:<subject token>`,
 * `strict-cluster` at one that refuses, without `fallback_to_shared`. The scripted investigator
 * calls `whoami` on both, the chat agent on `cluster`.
 */
describe("e2e: UserCredentials", () => {
  let sys: E2E;
  let ws: TestClient;
  let db: Db;
  let sts: FakeSts;
  let refusingSts: FakeSts;
  let cluster: RecordingMcpServer;
  let strict: RecordingMcpServer;
  let sessionId: string;
  let chatStageId: string;
  const api = <T>(path: string, init?: RequestInit) =>
    sys.api<T>(path, { ...init, headers: { ...asUser("alice", ALICE), ...init?.headers } });

  /** The `llm_tool_call` events of the session's timeline, with their server. */
  async function toolCalls(stageId?: string) {
    const { body } = await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
    return body.events.filter(
      (e) => e.event_type === "llm_tool_call" && (stageId === undefined || e.stage_id === stageId),
    );
  }

  /** Everything the session's trace shows: the list, every LLM and every MCP interaction. */
  async function wholeTrace(): Promise<{ llm: string; mcp: string; list: string }> {
    const trace = await api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`);
    expect(trace.status).toBe(200);
    const executions = trace.body.stages.flatMap((s) => s.executions);
    const llmIds = [
      ...executions.flatMap((e) => e.llm_interactions.map((i) => i.id)),
      ...trace.body.session_interactions.map((i) => i.id),
    ];
    const mcpIds = executions.flatMap((e) => e.mcp_interactions.map((i) => i.id));
    const llm = await Promise.all(
      llmIds.map(async (id) => {
        const r = await api<LLMInteractionDetail>(`/api/v1/sessions/${sessionId}/trace/llm/${id}`);
        expect(r.status).toBe(200);
        return JSON.stringify(r.body);
      }),
    );
    const mcp = await Promise.all(
      mcpIds.map(async (id) => {
        const r = await api<MCPInteractionDetail>(`/api/v1/sessions/${sessionId}/trace/mcp/${id}`);
        expect(r.status).toBe(200);
        return JSON.stringify(r.body);
      }),
    );
    expect(llm.length).toBeGreaterThanOrEqual(4);
    expect(mcp.length).toBeGreaterThanOrEqual(3);
    return { llm: llm.join("\n"), mcp: mcp.join("\n"), list: JSON.stringify(trace.body) };
  }

  /** Resolves once the WebSocket carried every timeline event the API shows, completed. */
  async function allEventsOnWebSocket(): Promise<void> {
    const { body } = await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
    await until(
      async () => {
        const frames = ws.frames.flatMap((f) =>
          "id" in f && f.channel === `session:${sessionId}` ? [f.payload] : [],
        );
        const completed = new Set(
          frames.flatMap((p) => (p.type === "timeline_event.completed" ? [p.event_id] : [])),
        );
        const createdDone = new Set(
          frames.flatMap((p) =>
            p.type === "timeline_event.created" && p.status === "completed" ? [p.event_id] : [],
          ),
        );
        return body.events.every((e) => completed.has(e.id) || createdDone.has(e.id));
      },
      { what: "the WebSocket to show every completed timeline event", timeoutMs: 15_000 },
    );
  }

  beforeAll(async () => {
    sts = await startFakeSts();
    refusingSts = await startFakeSts();
    refusingSts.failWith(400, "invalid_grant");
    cluster = await startRecordingMcpServer("http");
    strict = await startRecordingMcpServer("http");
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      // Every line a service writes, so the log check below sees everything.
      logLevel: "debug",
      env: {
        TARSY_TOKEN_KEY: randomBytes(32).toString("base64"),
        CLUSTER_MCP_URL: cluster.url,
        STRICT_MCP_URL: strict.url,
        STS_URL: sts.url,
        REFUSING_STS_URL: refusingSts.url,
        SHARED_MCP_TOKEN: SHARED,
        STS_CLIENT_SECRET: STS_SECRET,
      },
    });
    db = createDb({ url: sys.database.url, poolSize: 2 });
    ws = await connectClient(sys.stack.wsUrl, asUser("alice", ALICE));
    ws.send({ action: "subscribe", channel: "sessions" });
    await ws.waitFor((f) => f.type === "subscription.confirmed" && f.channel === "sessions");
  }, 180_000);

  afterAll(async () => {
    saveLogs(sys, "user-credentials");
    await ws?.close();
    await db?.close();
    await sys?.stop();
    for (const server of [cluster, strict]) await server?.close();
    for (const s of [sts, refusingSts]) await s?.close();
  }, 60_000);

  it("calls the exchanging server with the submitting user's exchanged token and fails the refusing one closed", async () => {
    const submitted = await api<{ session_id: string; status: string }>("/api/v1/alerts", {
      method: "POST",
      body: JSON.stringify({ alert_type: "WhoAmI", data: { cluster: "prod-1" } }),
    });
    expect(submitted.status).toBe(202);
    sessionId = submitted.body.session_id;
    ws.send({ action: "subscribe", channel: `session:${sessionId}` });
    await ws.waitFor(
      (f) => f.type === "subscription.confirmed" && f.channel === `session:${sessionId}`,
    );
    // The token is kept (sealed, never in clear) while the session runs.
    const kept = await storedUserTokensOf(db.prisma, sessionId);
    expect(kept?.session).toBeTruthy();
    expect(kept?.session).not.toContain(ALICE);
    const running = await api<SessionDetail>(`/api/v1/sessions/${sessionId}`);
    expect(TERMINAL_SESSION_STATUSES).not.toContain(running.body.status);

    const done = await until(
      async () => {
        const r = await api<SessionDetail>(`/api/v1/sessions/${sessionId}`);
        return TERMINAL_SESSION_STATUSES.includes(r.body.status) ? r.body : null;
      },
      { what: "the session to end", timeoutMs: 90_000 },
    );
    expect(done.status).toBe("completed");
    expect(done.final_analysis).toContain("the strict cluster refused");

    const calls = await toolCalls();
    const byServer = (server: string) =>
      calls.filter((e) => (e.metadata as { server_name?: string } | null)?.server_name === server);
    const [good] = byServer("cluster");
    const [refused] = byServer("strict-cluster");
    expect(byServer("cluster")).toHaveLength(1);
    expect(byServer("strict-cluster")).toHaveLength(1);
    // `whoami` answers a digest of the Authorization header it got: alice's exchanged token.
    expect(good?.status).toBe("completed");
    expect(good?.metadata).toMatchObject({ tool_name: "whoami", is_error: false });
    expect(good?.content).toBe(callerTag(`Bearer exchanged:${ALICE}`));
    // Failed closed, with the reason, and without the token the STS echoed in its error.
    expect(refused?.metadata).toMatchObject({ tool_name: "whoami", is_error: true });
    expect(refused?.content).toContain(
      "token exchange for server strict-cluster failed: the STS answered HTTP 400 (invalid_grant)",
    );

    // The exchanging server saw alice's exchanged token on every call of the execution, the
    // shared one only outside it (the gateway's health checks: the exception docs/operations.md
    // states under "Per-user tool credentials"), and never her own token.
    expect(cluster.toolCallBearers()).toEqual([`Bearer exchanged:${ALICE}`]);
    const seen = new Set(cluster.requests.map((r) => r.authorization));
    expect(
      [...seen].every((a) => a === `Bearer exchanged:${ALICE}` || a === `Bearer ${SHARED}`),
    ).toBe(true);
    // The refusing server was never called with anyone's credentials.
    expect(strict.toolCallBearers()).toEqual([]);
    expect(strict.requests.every((r) => r.authorization === `Bearer ${SHARED}`)).toBe(true);

    // Both STSes got alice's token as the subject, with the gateway's client credentials.
    const basic = `Basic ${Buffer.from(`tarsy-gateway:${STS_SECRET}`).toString("base64")}`;
    expect(sts.requests.length).toBeGreaterThanOrEqual(1);
    expect(refusingSts.requests.length).toBeGreaterThanOrEqual(1);
    for (const request of [...sts.requests, ...refusingSts.requests]) {
      expect(request.form.subject_token).toBe(ALICE);
      expect(request.authorization).toBe(basic);
    }
    expect(sts.requests[0]?.form).toMatchObject({
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      audience: "mcp-cluster",
      scope: "cluster.read",
    });
  }, 150_000);

  it("wipes the stored token once the session is terminal", async () => {
    const stored = await storedUserTokensOf(db.prisma, sessionId);
    expect(stored).toEqual({ session: null, sessionExpiresAt: null, chatMessages: [] });
  });

  it("runs a chat turn's tool call with the asking user's own exchanged token", async () => {
    const stsBefore = sts.requests.length;
    const asked = await api(`/api/v1/sessions/${sessionId}/chat/messages`, {
      method: "POST",
      headers: asUser("bob", BOB),
      body: JSON.stringify({ content: "Who are you on the cluster?" }),
    });
    expect(asked.status).toBe(202);
    const stage = await until(
      async () => {
        const r = await api<SessionDetail>(`/api/v1/sessions/${sessionId}`);
        const chat = r.body.stages.find((s) => s.kind === "chat");
        return chat && TERMINAL_EXECUTION_STATUSES.includes(chat.status) ? chat : null;
      },
      { what: "the chat turn to end", timeoutMs: 60_000 },
    );
    chatStageId = stage.id;
    expect(stage.status).toBe("completed");

    const [call] = await toolCalls(chatStageId);
    expect(call?.metadata).toMatchObject({ server_name: "cluster", is_error: false });
    expect(call?.content).toBe(callerTag(`Bearer exchanged:${BOB}`));
    expect(cluster.toolCallBearers()).toEqual([
      `Bearer exchanged:${ALICE}`,
      `Bearer exchanged:${BOB}`,
    ]);
    const exchanges = sts.requests.slice(stsBefore);
    expect(exchanges.map((r) => r.form.subject_token)).toEqual([BOB]);
    // The chat turn's token is wiped with the turn; the session's stays wiped.
    const stored = await storedUserTokensOf(db.prisma, sessionId);
    expect(stored?.session).toBeNull();
    expect(stored?.chatMessages).toEqual([{ sealed: null, expiresAt: null }]);
  }, 90_000);

  it("never shows a user's token: not in the timeline, the trace, the LLM or MCP interactions, the WebSocket, the logs or the database", async () => {
    await allEventsOnWebSocket();
    const timeline = await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
    const detail = await api<SessionDetail>(`/api/v1/sessions/${sessionId}`);
    const trace = await wholeTrace();
    // The exchanged tokens neither: only the digest `whoami` answers.
    expect(trace.mcp).toContain(callerTag(`Bearer exchanged:${BOB}`));
    const frames = JSON.stringify(ws.frames);
    expect(frames).toContain(callerTag(`Bearer exchanged:${ALICE}`));
    // Every process ends and its output closes, so every line it wrote is in; the raw lines
    // (pino JSON, objects included) besides the formatted ones.
    await sys.stack.stop();
    await until(
      async () =>
        sys.stack.processes.every((p) => p.child.stdout?.closed && p.child.stderr?.closed),
      { what: "every service's output to close", timeoutMs: 15_000 },
    );
    const logs = [...sys.stack.processes.flatMap((p) => p.lines), ...sys.logs].join("\n");
    // Postgres only ever held the sealed form, now wiped.
    const database = await dumpDatabase(sys.database.url);
    expect(logs).toContain("token exchange for server strict-cluster failed");
    const places = {
      timeline: JSON.stringify(timeline.body),
      session: JSON.stringify(detail.body),
      trace: trace.list,
      "llm interactions": trace.llm,
      "mcp interactions": trace.mcp,
      websocket: frames,
      logs,
      database,
    };
    for (const token of [ALICE, BOB]) {
      for (const [place, text] of Object.entries(places)) {
        expect(text.includes(token), `${place} contains a user token`).toBe(false);
      }
    }
  }, 60_000);
});
