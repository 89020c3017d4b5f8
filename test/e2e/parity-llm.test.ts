import { resolve } from "node:path";
import {
  ACTIVE_EXECUTION_STATUSES,
  type LLMInteractionDetail,
  type MCPInteractionDetail,
  type SessionDetail,
  TERMINAL_SESSION_STATUSES,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import { connectClient, type TestClient, until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { geminiChunk, geminiUsage } from "../../llm-service/test/fakes/gemini.ts";
import {
  type FakeProvider,
  type RecordedRequest,
  type Responder,
  respondSse,
  startFakeProvider,
} from "../../llm-service/test/fakes/http.ts";
import { ask, saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/parity-llm");
const EVERYTHING_MCP = resolve(
  ROOT,
  "services/mcp-gateway/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

/** What the fake Gemini server was sent (both SDKs speak the same REST shape). */
interface GeminiBody {
  contents: { role: string; parts: Record<string, unknown>[] }[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: Record<string, unknown>[];
}
const bodyOf = (r: RecordedRequest) => r.body as GeminiBody;
const systemOf = (r: RecordedRequest) =>
  (bodyOf(r).systemInstruction?.parts ?? []).map((p) => p.text).join("\n");
const declarationsOf = (r: RecordedRequest) =>
  (bodyOf(r).tools ?? []).flatMap(
    (t) => (t.functionDeclarations as { name: string }[] | undefined) ?? [],
  );
const answeredTool = (r: RecordedRequest) =>
  bodyOf(r).contents.some((c) => c.parts.some((p) => p.functionResponse));
const isSummarization = (r: RecordedRequest) => systemOf(r).includes("expert at summarizing");

const SEARCH_QUERIES = ["java.lang.OutOfMemoryError exit code 137 kubernetes"];
const SEARCH_SOURCES = [
  {
    uri: "https://kubernetes.io/docs/tasks/configure-pod-container/assign-memory-resource/",
    title: "Assign Memory Resources",
  },
  {
    uri: "https://docs.oracle.com/javase/8/docs/technotes/guides/troubleshoot/memleaks002.html",
    title: "Understand the OutOfMemoryError Exception",
  },
];

const text = (value: string): Responder =>
  respondSse([
    geminiChunk([{ text: value }], { finishReason: "STOP", usage: geminiUsage(40, 12, 0) }),
  ]);
const call = (name: string, args: Record<string, unknown>): Responder =>
  respondSse([
    geminiChunk([{ functionCall: { name, args } }], {
      finishReason: "STOP",
      usage: geminiUsage(40, 8, 0),
    }),
  ]);

/**
 * The fake Gemini's answers, chosen by what a request is (the agents' instructions, a tool
 * result already in the conversation, the summarization prompt), so nothing depends on order.
 */
const gemini: Responder = async (res, req) => {
  const system = systemOf(req);
  const tool = (suffix: string) => declarationsOf(req).find((d) => d.name.endsWith(suffix))?.name;
  let answer: Responder;
  if (isSummarization(req)) {
    answer = text("NATIVE-SUMMARY: payments-api OOMKilled (exit 137) under a 2Gi limit.");
  } else if (system.includes("Search the web for the error.")) {
    answer = respondSse([
      geminiChunk([{ text: "The JVM heap leaves no room for non-heap memory under the limit." }], {
        finishReason: "STOP",
        usage: geminiUsage(40, 12, 0),
        candidate: {
          groundingMetadata: {
            webSearchQueries: SEARCH_QUERIES,
            groundingChunks: SEARCH_SOURCES.map((web) => ({ web })),
          },
        },
      }),
    ]);
  } else if (system.includes("Echo the alert.")) {
    answer = answeredTool(req)
      ? text("LANGCHAIN-ANSWER: the alert was echoed.")
      : call(tool("echo") ?? "missing_echo", { message: "PARITY-LANGCHAIN" });
  } else if (system.includes("Describe the failing pod.")) {
    answer = answeredTool(req)
      ? text("NATIVE-ANSWER: the heap setting leaves no room under the 2Gi limit.")
      : call(tool("describe_pod") ?? "missing_describe_pod", {
          namespace: "payments",
          pod: "payments-api-7f9c6d5b8-x2kqz",
        });
  } else {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        error: { code: 400, message: "unexpected request", status: "INVALID_ARGUMENT" },
      }),
    );
    return;
  }
  await answer(res, req);
};

/**
 * LLM paths of the parity table: an agent with two MCP servers, a chat turn whose tool result
 * is summarized, langchain and google-native agents in one session (the Gemini ones at a
 * loopback fake Gemini server speaking its real wire protocol), Google search grounding.
 */
describe("e2e: parity-llm", () => {
  let sys: E2E;
  let fake: FakeProvider;
  let ws: TestClient;
  const api = <T>(path: string, init?: RequestInit) => sys.api<T>(path, init);
  const trace = async (id: string) =>
    (await api<TraceListResponse>(`/api/v1/sessions/${id}/trace`)).body;
  const llmDetail = async (id: string, interactionId: string) =>
    (await api<LLMInteractionDetail>(`/api/v1/sessions/${id}/trace/llm/${interactionId}`)).body;
  const mcpDetail = async (id: string, interactionId: string) =>
    (await api<MCPInteractionDetail>(`/api/v1/sessions/${id}/trace/mcp/${interactionId}`)).body;
  const events = async (id: string) =>
    (await api<TimelineResponse>(`/api/v1/sessions/${id}/timeline`)).body.events;

  beforeAll(async () => {
    fake = await startFakeProvider(gemini);
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      env: {
        FAKE_GEMINI_URL: fake.url,
        PARITY_GEMINI_KEY: "AIza-e2e-parity-key-0123456789",
        NODE_BIN: process.execPath,
        EVERYTHING_MCP,
      },
    });
    ws = await connectClient(sys.stack.wsUrl);
  }, 180_000);

  afterAll(async () => {
    saveLogs(sys, "parity-llm");
    await ws?.close();
    await sys?.stop();
    await fake?.close();
  }, 60_000);

  /**
   * Submits an alert watched on the WebSocket from the start (the list channel, then the
   * session's); the session once completed, and where its frames begin in `ws.frames`.
   */
  async function watched(alertType: string) {
    ws.send({ action: "subscribe", channel: "sessions" });
    await ws.waitFor((f) => f.type === "subscription.confirmed" && f.channel === "sessions");
    const from = ws.frames.length;
    const id = await submitAlert(sys, alertType);
    ws.send({ action: "subscribe", channel: `session:${id}` });
    await ws.waitFor(
      (f) => f.type === "subscription.confirmed" && f.channel === `session:${id}`,
      10_000,
      from,
    );
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000);
    expect(done.status, done.error_message ?? "").toBe("completed");
    return { id, from, done };
  }

  async function investigate(alertType: string): Promise<string> {
    const id = await submitAlert(sys, alertType);
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000);
    expect(done.status, done.error_message ?? "").toBe("completed");
    return id;
  }

  it("a chain with two MCP servers: the agent calls a tool of each, each interaction names its server", async () => {
    const id = await investigate("TwoServers");
    const [stage] = (await trace(id)).stages;
    const [exec] = stage?.executions ?? [];
    expect(exec?.agent_name).toBe("TwoServerAgent");
    const calls = (exec?.mcp_interactions ?? []).filter((i) => i.interaction_type === "tool_call");
    expect(calls.map((i) => [i.server_name, i.tool_name]).sort()).toEqual([
      ["demo-cluster", "get_pods"],
      ["everything", "echo"],
    ]);
    for (const i of calls) expect(i.error_message).toBeNull();
    const details = await Promise.all(calls.map((i) => mcpDetail(id, i.id)));
    const byServer = new Map(details.map((d) => [d.server_name, d]));
    expect(byServer.get("demo-cluster")?.tool_arguments).toEqual({ namespace: "payments" });
    expect(JSON.stringify(byServer.get("demo-cluster")?.tool_result)).toContain(
      "payments-api-7f9c6d5b8-x2kqz  0/1     CrashLoopBackOff   14",
    );
    expect(byServer.get("everything")?.tool_arguments).toEqual({
      message: "PARITY-ECHO payments-api crash loop",
    });
    expect(JSON.stringify(byServer.get("everything")?.tool_result)).toContain(
      "Echo: PARITY-ECHO payments-api crash loop",
    );

    const toolEvents = (await events(id)).filter((e) => e.event_type === "llm_tool_call");
    expect(
      toolEvents.map((e) => {
        const m = e.metadata as { server_name: string; tool_name: string; is_error: boolean };
        return [m.server_name, m.tool_name, m.is_error, e.status];
      }),
    ).toEqual([
      ["demo-cluster", "get_pods", false, "completed"],
      ["everything", "echo", false, "completed"],
    ]);
    expect(toolEvents[1]?.content).toContain("Echo: PARITY-ECHO payments-api crash loop");
  }, 120_000);

  it("a chat turn calls a tool, and its large result is summarized before the answer", async () => {
    const id = await investigate("TwoServers");
    const chat = await ask(sys, id, "Why does payments-api crash?");
    const stage = await until(
      async () => {
        const d = (await api<SessionDetail>(`/api/v1/sessions/${id}`)).body;
        const s = d.stages.find((x) => x.id === chat.id);
        return s && !ACTIVE_EXECUTION_STATUSES.includes(s.status) ? s : null;
      },
      { what: "the chat turn to end", timeoutMs: 60_000 },
    );
    expect(stage.status).toBe("completed");

    const chatTrace = (await trace(id)).stages.find((s) => s.stage_id === chat.id);
    const [exec] = chatTrace?.executions ?? [];
    expect(exec?.agent_name).toBe("ChatAgent");
    expect(exec?.llm_interactions.map((i) => i.interaction_type)).toEqual([
      "iteration",
      "summarization",
      "chat_response",
    ]);
    expect(exec?.mcp_interactions.filter((i) => i.interaction_type === "tool_call")).toEqual([
      expect.objectContaining({ server_name: "demo-cluster", tool_name: "describe_pod" }),
    ]);
    const summarization = exec?.llm_interactions.find(
      (i) => i.interaction_type === "summarization",
    );
    const summary = await llmDetail(id, summarization?.id ?? "");
    expect(summary.stage_id).toBe(chat.id);
    expect(summary.response_text).toBe(
      "CHAT-SUMMARY: payments-api OOMKilled (exit 137), limit 2Gi, -Xmx1900m.",
    );
    // The answer was written from the summary, not from the raw result.
    const last = await llmDetail(id, exec?.llm_interactions[2]?.id ?? "");
    const toolMessage = last.conversation.find((m) => m.role === "tool");
    expect(toolMessage?.content).toContain("CHAT-SUMMARY: payments-api OOMKilled");
    expect(toolMessage?.content).not.toContain("JAVA_OPTS");

    const own = (await events(id)).filter((e) => e.stage_id === chat.id);
    const kinds = own.map((e) => e.event_type);
    expect(kinds.indexOf("llm_tool_call")).toBeGreaterThanOrEqual(0);
    expect(kinds.indexOf("mcp_tool_summary")).toBeGreaterThan(kinds.indexOf("llm_tool_call"));
    const toolCall = own.find((e) => e.event_type === "llm_tool_call");
    expect(toolCall?.metadata).toMatchObject({
      server_name: "demo-cluster",
      tool_name: "describe_pod",
      is_error: false,
    });
    const summaryEvent = own.find((e) => e.event_type === "mcp_tool_summary");
    expect(summaryEvent).toMatchObject({
      status: "completed",
      content: "CHAT-SUMMARY: payments-api OOMKilled (exit 137), limit 2Gi, -Xmx1900m.",
      metadata: expect.objectContaining({ server_name: "demo-cluster", tool_name: "describe_pod" }),
    });
    const originalTokens = (summaryEvent?.metadata as { original_tokens?: number } | null)
      ?.original_tokens;
    expect(originalTokens).toBeGreaterThan(300);
    const answerAt = own.findIndex((e) => e.content.includes("CHAT-ANSWER"));
    expect(answerAt).toBeGreaterThan(kinds.indexOf("mcp_tool_summary"));
  }, 150_000);

  it("mixed backends in one session: langchain and google-native agents; summarization calls carry no tools or native tools", async () => {
    const first = fake.requests.length;
    const id = await investigate("MixedBackends");
    const detail = (await api<SessionDetail>(`/api/v1/sessions/${id}`)).body;
    const byAgent = new Map(
      detail.stages.flatMap((s) => s.executions.map((e) => [e.agent_name, e] as const)),
    );
    expect(byAgent.get("LangchainAgent")).toMatchObject({
      llm_backend: "langchain",
      llm_provider: "gemini-langchain",
    });
    expect(byAgent.get("NativeAgent")).toMatchObject({
      llm_backend: "google-native",
      llm_provider: "gemini-native",
    });
    expect(detail.final_analysis).toContain("NATIVE-ANSWER");

    // Every LLM interaction of each agent records the backend it went through.
    const stages = (await trace(id)).stages;
    const interactions = await Promise.all(
      stages.flatMap((s) =>
        s.executions.flatMap((e) =>
          e.llm_interactions.map(async (i) => ({
            agent: e.agent_name,
            type: i.interaction_type,
            request: (await llmDetail(id, i.id)).llm_request as {
              backend: string;
              tools: { name: string }[];
              native_tools?: unknown;
            },
          })),
        ),
      ),
    );
    expect(interactions.map((i) => [i.agent, i.type, i.request.backend])).toEqual([
      ["LangchainAgent", "iteration", "langchain"],
      ["LangchainAgent", "final_analysis", "langchain"],
      ["NativeAgent", "iteration", "google-native"],
      ["NativeAgent", "summarization", "google-native"],
      ["NativeAgent", "final_analysis", "google-native"],
    ]);
    const summarization = interactions.find((i) => i.type === "summarization");
    expect(summarization?.request.tools).toEqual([]);
    expect(summarization?.request.native_tools).toBeUndefined();
    // The investigation calls were offered the provider's Google search (suppressed by the
    // backend while MCP tools are bound, see below).
    const investigation = interactions.find(
      (i) => i.agent === "NativeAgent" && i.type === "iteration",
    );
    expect(investigation?.request.tools.map((t) => t.name)).toContain("demo-cluster.describe_pod");
    expect(investigation?.request.native_tools).toEqual({ googleSearch: true });

    // What reached Gemini: each SDK's own path, the tools on the investigation requests, and
    // neither function declarations nor Google search on the summarization request.
    const sent = fake.requests.slice(first);
    expect(sent.map((r) => r.path.replace(/\?.*/, ""))).toEqual([
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
      "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
      "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
      "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
    ]);
    const [langchainFirst, , nativeFirst, nativeSummary, nativeLast] = sent;
    expect(declarationsOf(langchainFirst as RecordedRequest).map((d) => d.name)).toEqual(
      expect.arrayContaining([expect.stringMatching(/echo$/)]),
    );
    expect(declarationsOf(nativeFirst as RecordedRequest).map((d) => d.name)).toContain(
      "demo-cluster__describe_pod",
    );
    // MCP tools bound: Gemini cannot combine them with Google search, so it is left out.
    expect(JSON.stringify(bodyOf(nativeFirst as RecordedRequest).tools)).not.toContain(
      "googleSearch",
    );
    expect(isSummarization(nativeSummary as RecordedRequest)).toBe(true);
    expect(bodyOf(nativeSummary as RecordedRequest).tools).toBeUndefined();
    expect(answeredTool(nativeLast as RecordedRequest)).toBe(true);
    expect(JSON.stringify(bodyOf(nativeLast as RecordedRequest).contents)).toContain(
      "NATIVE-SUMMARY",
    );
  }, 120_000);

  it("a Google search grounding shows in the timeline", async () => {
    const { id, from } = await watched("Grounded");

    // The request carried Google search (no MCP tools are bound).
    const searched = fake.requests.filter((r) =>
      systemOf(r).includes("Search the web for the error."),
    );
    expect(searched).toHaveLength(1);
    expect(bodyOf(searched[0] as RecordedRequest).tools).toEqual([{ googleSearch: {} }]);

    const expectedContent = [
      `Searched: ${SEARCH_QUERIES.join("; ")}`,
      ...SEARCH_SOURCES.map((s) => `- ${s.title}: ${s.uri}`),
    ].join("\n");
    const grounding = (await events(id)).filter((e) => e.event_type === "google_search_result");
    expect(grounding).toHaveLength(1);
    expect(grounding[0]).toMatchObject({
      status: "completed",
      content: expectedContent,
      metadata: { queries: SEARCH_QUERIES, sources: SEARCH_SOURCES, urls: [] },
    });
    const frame = await ws.waitFor(
      (f) =>
        "id" in f &&
        f.payload.type === "timeline_event.created" &&
        f.payload.session_id === id &&
        f.payload.event_type === "google_search_result",
      10_000,
      from,
    );
    expect("id" in frame && frame.payload).toMatchObject({
      content: expectedContent,
      metadata: { queries: SEARCH_QUERIES, sources: SEARCH_SOURCES },
    });
    const final = (await events(id)).find((e) => e.event_type === "final_analysis");
    expect(final?.content).toContain("The JVM heap leaves no room");
  }, 120_000);

  it("an agent configured iteration_strategy: react streams one thought per iteration, one tool call, one answer, with no duplicates", async () => {
    const { id, from, done } = await watched("ReactStreaming");
    expect(done.final_analysis).toContain("REACT-FINAL");

    // One thought per iteration, the text beside the tool call, one tool call, one answer.
    const stored = await events(id);
    expect(stored.map((e) => [e.event_type, e.status, e.content.split("\n")[0]])).toEqual([
      ["llm_thinking", "completed", "Thought: the pods first."],
      ["llm_response", "completed", "Checking the pods in payments."],
      ["llm_tool_call", "completed", expect.stringContaining("NAME")],
      ["llm_thinking", "completed", "Thought: 14 restarts in CrashLoopBackOff is enough."],
      ["final_analysis", "completed", expect.stringContaining("REACT-FINAL")],
      ["executive_summary", "completed", "Executive summary of the parity session."],
    ]);
    // Every stored event reached the WebSocket exactly once, the last (the summary) included.
    await ws.waitFor(
      (f) =>
        "id" in f &&
        f.payload.type === "timeline_event.created" &&
        f.payload.session_id === id &&
        f.payload.event_type === "executive_summary",
      10_000,
      from,
    );
    const created = ws.frames
      .slice(from)
      .flatMap((f) =>
        "id" in f && f.payload.type === "timeline_event.created" && f.payload.session_id === id
          ? [f.payload.event_id]
          : [],
      );
    expect(created).toEqual(stored.map((e) => e.id));
    // The answer streamed live in pieces that add up to what was stored.
    const answer = stored.find((e) => e.event_type === "final_analysis");
    const pieces = ws.frames
      .slice(from)
      .flatMap((f) =>
        f.type === "stream.chunk" && f.payload.event_id === answer?.id ? [f.payload.delta] : [],
      );
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join("")).toBe(answer?.content);
  }, 120_000);
});
