/**
 * Investigation memory (issue #24) through every service. Memories are embedded by
 * llm-service's Embed RPC against a loopback OpenAI embeddings server (deterministic word
 * vectors), so every line of our code runs. `Learn` sessions are scored; the reflector's answer
 * creates memories. `Recall` sessions get the best one injected, recall the other with
 * `recall_past_investigations`, and find the earlier session with `search_past_sessions`.
 * A reviewer's written feedback is reflected on by the feedback reflector, in the scoring stage.
 * A second stack runs with memory off.
 */

import { resolve } from "node:path";
import type {
  LLMInteractionDetail,
  MemoryListResponse,
  MemoryResponse,
  SessionDetail,
  SessionScore,
  SystemConfigResponse,
  TimelineResponse,
  TraceListResponse,
} from "@tarsy/contracts";
import { until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedEmbedding } from "../../llm-service/src/index.ts";
import { type FakeProvider, startFakeProvider } from "../../llm-service/test/fakes/http.ts";
import {
  type OpenAiEmbeddingsRequest,
  openAiEmbedResponder,
} from "../../llm-service/test/fakes/openai.ts";
import { ask, chatStage, saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const DIR = resolve(ROOT, "test/e2e/testdata/memory");
const DIMENSIONS = 256;
const PROCEDURE =
  "payments-api OOMKilled: compare the JVM heap with the container memory limit first.";
const BATCH =
  "Nightly batch jobs raise memory use in the early hours; do not blame them for daytime kills.";
const LIMITS = "Check the container's resource limits before diagnosing an OOM kill.";
const HEAP = "payments-api runs a JVM: a heap above the limit is the usual OOM cause.";
const FEEDBACK_ONE =
  "FEEDBACK-ONE: the investigation missed the container's resource limits; check them first.";
const FEEDBACK_TWO = "FEEDBACK-TWO: it is a JVM service, the heap setting is the usual cause.";

let sys: E2E;
let embeddings: FakeProvider;

const get = async <T>(path: string): Promise<T> => {
  const r = await sys.api<T>(path);
  expect(r.status, `GET ${path}`).toBe(200);
  return r.body;
};

/** What an execution's LLM call was sent (the trace API). */
async function callsOf(id: string, agent: string): Promise<LLMInteractionDetail[]> {
  const trace = await get<TraceListResponse>(`/api/v1/sessions/${id}/trace`);
  const calls = trace.stages.flatMap((s) =>
    s.executions.filter((e) => e.agent_name === agent).flatMap((e) => e.llm_interactions),
  );
  return Promise.all(
    calls.map((c) => get<LLMInteractionDetail>(`/api/v1/sessions/${id}/trace/llm/${c.id}`)),
  );
}

const systemOf = (call: LLMInteractionDetail | undefined) =>
  call?.conversation.find((m) => m.role === "system")?.content ?? "";

/** The tools an LLM call offered (its stored request). */
const toolNames = (call: LLMInteractionDetail | undefined): string[] =>
  ((call?.llm_request as { tools?: { name: string }[] } | null)?.tools ?? []).map((t) => t.name);

/** PATCH /sessions/review as alice. */
const reviewAs = (e2e: E2E, id: string, body: Record<string, unknown>) =>
  e2e.api<{ results: { success: boolean; error?: string }[] }>("/api/v1/sessions/review", {
    method: "PATCH",
    headers: { "x-forwarded-user": "alice@example.com" },
    body: JSON.stringify({ session_ids: [id], ...body }),
  });

/** What the feedback reflector asked for and wrote, straight from the database. */
async function reflectionsOf(e2e: E2E, id: string) {
  const sql = postgres(e2e.database.url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ feedback: string; status: string }[]>`
      SELECT feedback, status::text AS status FROM memory_feedback_reflections
       WHERE session_id = ${id} ORDER BY created_at, id`;
    const [queued] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM outbox_messages
       WHERE message_key = 'feedbackSubmitted' AND payload->>'session_id' = ${id}`;
    return { rows: rows.map((r) => [r.feedback, r.status]), queued: queued?.n ?? 0 };
  } finally {
    await sql.end();
  }
}

const scored = (id: string): Promise<SessionScore> =>
  until(
    async () => {
      const r = await sys.api<SessionScore>(`/api/v1/sessions/${id}/score`);
      return r.status === 200 && r.body.status !== "in_progress" ? r.body : null;
    },
    { what: `the score of ${id}`, timeoutMs: 60_000 },
  );

let learned: string;
let learnedMemories: MemoryResponse[];

beforeAll(async () => {
  embeddings = await startFakeProvider(
    openAiEmbedResponder((text) => scriptedEmbedding(text, DIMENSIONS)),
  );
  sys = await bootSystem({
    configDir: DIR,
    llmScriptPath: resolve(DIR, "llm-script.yaml"),
    env: { EMBED_URL: embeddings.url, EMBED_API_KEY: "sk-embed-test" },
  });
}, 120_000);
afterAll(async () => {
  saveLogs(sys, "memory");
  await sys?.stop();
  await embeddings?.close();
});

describe("Investigation memory", () => {
  it("the reflector turns a scored session into memories, embedded through llm-service", async () => {
    learned = await submitAlert(sys, "Learn", { pod: "payments-api-7f9c", reason: "OOMKilled" });
    await waitStatus(sys, learned, ["completed"], 60_000);
    expect((await scored(learned)).status).toBe("completed");

    learnedMemories = await get<MemoryResponse[]>(`/api/v1/sessions/${learned}/memories`);
    expect(learnedMemories.map((m) => [m.content, m.category, m.valence])).toEqual([
      [PROCEDURE, "procedural", "positive"],
      [BATCH, "semantic", "neutral"],
    ]);
    expect(learnedMemories.every((m) => m.confidence === 0.7 && m.seen_count === 1)).toBe(true);
    expect(learnedMemories.every((m) => m.project === "default" && !m.deprecated)).toBe(true);
    expect(learnedMemories.map((m) => [m.alert_type, m.chain_id])).toEqual([
      ["Learn", "learn"],
      ["Learn", "learn"],
    ]);

    // The reflector's call is in the scoring stage's trace, with the judge's findings; the
    // id it invented to reinforce changed nothing.
    const judge = await callsOf(learned, "ScoringAgent");
    const reflector = judge.find((c) => c.interaction_type === "memory_extraction");
    expect(reflector, "the reflector's LLM call").toBeDefined();
    const prompt = reflector?.conversation.map((m) => m.content).join("\n") ?? "";
    expect(prompt).toContain("memory extraction specialist");
    expect(prompt).toContain("Score: 88/100");
    expect(prompt).toContain("LEARNED: payments-api is OOM-killed");
    expect(prompt).toContain('<untrusted_data source="memory">\n[]\n</untrusted_data>');

    // The two memories were embedded as documents by the OpenAI wire, at the configured size.
    const documents = embeddings.requests
      .map((r) => r.body as OpenAiEmbeddingsRequest)
      .filter((b) => b.input.includes(PROCEDURE));
    expect(documents).toEqual([
      {
        model: "text-embedding-3-small",
        input: [PROCEDURE, BATCH],
        dimensions: DIMENSIONS,
        encoding_format: "float",
      },
    ]);
    expect(
      embeddings.requests.every((r) => r.headers.authorization === "Bearer sk-embed-test"),
    ).toBe(true);
  }, 120_000);

  it("a later investigation is given the most relevant memory, recalls the other, and finds the earlier session", async () => {
    const id = await submitAlert(sys, "Recall", {
      pod: "payments-api-7f9c",
      reason: "OOMKilled in namespace payments",
    });
    await waitStatus(sys, id, ["completed"], 60_000);
    const [procedure, batch] = learnedMemories;

    // Injection: one memory (max_inject 1), the procedure, in the system prompt's last tier.
    const calls = await callsOf(id, "Recaller");
    // The loop's two calls; the past-sessions digest is a summarization call between them.
    const [first, second] = calls.filter((c) => c.interaction_type !== "summarization");
    const system = systemOf(first);
    expect(system).toContain(
      `## Lessons from Past Investigations\n\nHints learned from earlier investigations in this project.`,
    );
    expect(system).toContain(`- [procedural, positive] ${PROCEDURE}`);
    expect(system).not.toContain(BATCH);
    expect(await get<MemoryResponse[]>(`/api/v1/sessions/${id}/injected-memories`)).toEqual([
      expect.objectContaining({ id: procedure?.id }),
    ]);
    const { events } = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    const injected = events.find((e) => e.event_type === "memory_injected");
    expect(injected?.metadata).toEqual({ memory_ids: [procedure?.id], count: 1 });

    // The tools: offered, called, answered by the runner.
    const offered = toolNames(first);
    expect(offered).toEqual(
      expect.arrayContaining(["recall_past_investigations", "search_past_sessions"]),
    );
    const tools = second?.conversation.filter((m) => m.role === "tool") ?? [];
    const recall = tools.find((m) => m.tool_name === "recall_past_investigations");
    expect(recall?.content).toContain(
      `Memories from past investigations for "nightly batch memory":`,
    );
    expect(recall?.content).toContain(`- [semantic, neutral] ${BATCH}`);
    // What was injected is not recalled again.
    expect(recall?.content).not.toContain(PROCEDURE);
    expect(batch?.id).toBeDefined();
    const past = tools.find((m) => m.tool_name === "search_past_sessions");
    expect(past?.content).toContain(`1 past session(s) match "payments-api":`);
    expect(past?.content).toContain("PAST-DIGEST: one earlier session found payments-api");
    // The digest's call saw the earlier session's alert and conclusion, not this one's.
    const digest = calls.find((c) => c.interaction_type === "summarization");
    expect(systemOf(digest)).toMatch(/^You summarize past incident investigations/);
    const bundle = digest?.conversation.map((m) => m.content).join("\n") ?? "";
    expect(bundle).toContain(`### Session ${learned}`);
    expect(bundle).toContain("LEARNED: payments-api is OOM-killed");
    expect(bundle).not.toContain(`### Session ${id}`);
    // A chat turn on the session: no lessons in its prompt, but it recalls with the tool
    // (and, having been given nothing, may recall the injected memory too).
    const chat = await ask(sys, id, "What did we learn about OOM kills before?");
    await until(async () => (await chatStage(sys, id, chat.id)).status === "completed", {
      what: "the chat turn",
      timeoutMs: 30_000,
    });
    const chatCalls = await callsOf(id, "ChatAgent");
    expect(systemOf(chatCalls[0])).not.toContain("Lessons from Past Investigations");
    expect(toolNames(chatCalls[0])).toEqual(
      expect.arrayContaining(["recall_past_investigations", "search_past_sessions"]),
    );
    const chatRecall = chatCalls[1]?.conversation.find(
      (m) => m.role === "tool" && m.tool_name === "recall_past_investigations",
    );
    expect(chatRecall?.content).toContain(`- [procedural, positive] ${PROCEDURE}`);
    const injectedEvents = (
      await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`)
    ).events.filter((e) => e.event_type === "memory_injected");
    expect(injectedEvents).toHaveLength(1);

    // Queries are embedded as queries.
    expect(
      embeddings.requests.some(
        (r) => (r.body as OpenAiEmbeddingsRequest).input[0] === "nightly batch memory",
      ),
    ).toBe(true);
  }, 120_000);

  it("a reviewer's rating changes the confidence of what the session taught", async () => {
    const review = (body: Record<string, unknown>) =>
      sys.api("/api/v1/sessions/review", {
        method: "PATCH",
        headers: { "x-forwarded-user": "alice@example.com" },
        body: JSON.stringify({ session_ids: [learned], ...body }),
      });
    expect((await review({ action: "complete", quality_rating: "accurate" })).status).toBe(200);
    const after = await get<MemoryResponse[]>(`/api/v1/sessions/${learned}/memories`);
    expect(after.map((m) => m.confidence)).toEqual([0.84, 0.84].map((c) => expect.closeTo(c, 6)));
    expect((await review({ action: "reopen" })).status).toBe(200);
    expect((await review({ action: "complete", quality_rating: "inaccurate" })).status).toBe(200);
    const wrong = await get<MemoryResponse[]>(`/api/v1/sessions/${learned}/memories`);
    expect(wrong.map((m) => m.deprecated)).toEqual([true, true]);
    // Deprecated memories are never injected: a new investigation gets no lessons.
    const id = await submitAlert(sys, "Recall", { pod: "payments-api-7f9c" });
    await waitStatus(sys, id, ["completed"], 60_000);
    const [first] = await callsOf(id, "Recaller");
    expect(systemOf(first)).not.toContain("Lessons from Past Investigations");
    expect(await get<MemoryResponse[]>(`/api/v1/sessions/${id}/injected-memories`)).toEqual([]);
  }, 120_000);

  it("a reviewer's written feedback is reflected on in the scoring stage: memories at 0.9, once per feedback text", async () => {
    const id = await submitAlert(sys, "Learn", { pod: "payments-api-7f9c", reason: "OOMKilled" });
    await waitStatus(sys, id, ["completed"], 60_000);
    expect((await scored(id)).status).toBe("completed");
    const taught = await get<MemoryResponse[]>(`/api/v1/sessions/${id}/memories`);
    expect(taught.map((m) => [m.content, m.confidence])).toEqual([
      [PROCEDURE, 0.7],
      [BATCH, 0.7],
    ]);
    const ofSession = async () =>
      (
        await get<MemoryListResponse>(
          `/api/v1/memories?source_session_id=${id}&page_size=50&deprecated=false`,
        )
      ).memories;
    const reflectors = async () =>
      (await get<SessionDetail>(`/api/v1/sessions/${id}`)).stages.flatMap((s) =>
        s.executions
          .filter((e) => e.agent_name === "FeedbackReflector")
          .map((e) => ({ stage: s, execution: e })),
      );

    // The review completes with a rating and written feedback.
    const completed = await reviewAs(sys, id, {
      action: "complete",
      quality_rating: "partially_accurate",
      action_taken: "Raised the memory limit.",
      investigation_feedback: FEEDBACK_ONE,
    });
    expect(completed.body.results).toEqual([expect.objectContaining({ success: true })]);
    // The rating refined what the session taught at once…
    const rated = await get<MemoryResponse[]>(`/api/v1/sessions/${id}/memories`);
    expect(rated.map((m) => m.confidence)).toEqual([0.42, 0.42].map((c) => expect.closeTo(c, 6)));
    // …and the feedback reflector, run in the scoring stage, adds what the reviewer taught.
    const learned = await until(
      async () => {
        const all = await ofSession();
        return all.some((m) => m.content === LIMITS) ? all : null;
      },
      { what: "the memory learned from the feedback", timeoutMs: 60_000 },
    );
    const fromFeedback = learned.find((m) => m.content === LIMITS);
    expect(fromFeedback).toMatchObject({
      category: "procedural",
      valence: "positive",
      confidence: 0.9,
      seen_count: 1,
      source_session_id: id,
      project: "default",
      alert_type: "Learn",
      chain_id: "learn",
      deprecated: false,
    });
    const [first] = await until(
      async () => {
        const runs = await reflectors();
        return runs.every((r) => r.execution.status === "completed") ? runs : null;
      },
      { what: "the feedback reflector's execution", timeoutMs: 30_000 },
    );
    expect(first?.stage.kind).toBe("scoring");
    expect(first?.stage.executions.map((e) => [e.agent_name, e.kind])).toEqual([
      ["ScoringAgent", "scoring"],
      ["FeedbackReflector", "feedback_reflection"],
    ]);
    // Its call is recorded like the reflector's, and read the feedback, its rating and the
    // memories it may reinforce or deprecate.
    const [call] = await callsOf(id, "FeedbackReflector");
    expect(call?.interaction_type).toBe("memory_extraction");
    const prompt = call?.conversation.map((m) => m.content).join("\n") ?? "";
    expect(prompt).toContain("A human reviewer examined one finished investigation");
    expect(prompt).toContain(`<reviewer_feedback>\n${FEEDBACK_ONE}\n</reviewer_feedback>`);
    expect(prompt).toContain("Quality rating: partially_accurate");
    expect(prompt).toContain("LEARNED: payments-api is OOM-killed");
    for (const m of taught) expect(prompt).toContain(m.id);
    // The session and its review are as the reviewer left them.
    const session = await get<SessionDetail>(`/api/v1/sessions/${id}`);
    expect([session.status, session.review_status]).toEqual(["completed", "reviewed"]);

    // The same feedback again — an update of the rating alone, the text again with new
    // whitespace — is no new feedback: nothing more is asked for.
    await reviewAs(sys, id, { action: "update_feedback", quality_rating: "accurate" });
    await reviewAs(sys, id, {
      action: "update_feedback",
      investigation_feedback: `${FEEDBACK_ONE}\n`,
    });
    expect(await reflectionsOf(sys, id)).toEqual({
      rows: [[FEEDBACK_ONE, "completed"]],
      queued: 1,
    });

    // A new text is new feedback: the reflector runs again.
    const updated = await reviewAs(sys, id, {
      action: "update_feedback",
      investigation_feedback: FEEDBACK_TWO,
    });
    expect(updated.body.results).toEqual([expect.objectContaining({ success: true })]);
    const after = await until(
      async () => {
        const all = await ofSession();
        return all.some((m) => m.content === HEAP) ? all : null;
      },
      { what: "the memory learned from the updated feedback", timeoutMs: 60_000 },
    );
    await until(
      async () => {
        const runs = await reflectors();
        return runs.length === 2 && runs.every((r) => r.execution.status === "completed");
      },
      { what: "the second feedback reflection", timeoutMs: 30_000 },
    );
    // Each feedback text taught its memory exactly once.
    expect(after.map((m) => [m.content, m.confidence]).sort()).toEqual(
      [
        [PROCEDURE, expect.closeTo(0.42, 6)],
        [BATCH, expect.closeTo(0.42, 6)],
        [LIMITS, 0.9],
        [HEAP, 0.9],
      ].sort(),
    );
    expect(await reflectionsOf(sys, id)).toEqual({
      rows: [
        [FEEDBACK_ONE, "completed"],
        [FEEDBACK_TWO, "completed"],
      ],
      queued: 2,
    });
  }, 180_000);
});

describe("Investigation memory, configuration", () => {
  it("the configuration viewer shows memory's settings and the key's variable, never a key", async () => {
    const config = await get<SystemConfigResponse>("/api/v1/system/config");
    expect(config.defaults.memory).toEqual({
      enabled: true,
      max_inject: 1,
      reflector_memory_limit: 20,
      embedding: {
        provider: "openai",
        model: "text-embedding-3-small",
        api_key_env: "EMBED_API_KEY",
        dimensions: DIMENSIONS,
        base_url: `${new URL(embeddings.url).origin}/`,
      },
    });
    expect(JSON.stringify(config)).not.toContain("sk-embed-test");
  });
});

describe("Investigation memory, off", () => {
  let off: E2E;
  beforeAll(async () => {
    off = await bootSystem({
      configDir: resolve(ROOT, "test/e2e/testdata/skills"),
      llmScriptPath: resolve(ROOT, "test/e2e/testdata/skills/llm-script.yaml"),
    });
  }, 120_000);
  afterAll(async () => {
    saveLogs(off, "memory-off");
    await off?.stop();
  });

  it("without defaults.memory, no lessons, no memory tools and no memory events", async () => {
    const id = await submitAlert(off, "Skilled", { pod: "payments-api", reason: "OOMKilled" });
    await waitStatus(off, id, ["completed"], 90_000);
    const trace = (await off.api<TraceListResponse>(`/api/v1/sessions/${id}/trace`)).body;
    const callIds = trace.stages.flatMap((s) =>
      s.executions.flatMap((e) => e.llm_interactions.map((c) => c.id)),
    );
    expect(callIds.length).toBeGreaterThan(0);
    for (const callId of callIds) {
      const call = (
        await off.api<LLMInteractionDetail>(`/api/v1/sessions/${id}/trace/llm/${callId}`)
      ).body;
      expect(systemOf(call)).not.toContain("Lessons from Past Investigations");
      const names = toolNames(call);
      expect(names).not.toContain("recall_past_investigations");
      expect(names).not.toContain("search_past_sessions");
    }
    const { events } = (await off.api<TimelineResponse>(`/api/v1/sessions/${id}/timeline`)).body;
    expect(events.filter((e) => e.event_type === "memory_injected")).toEqual([]);
  }, 120_000);

  it("without defaults.memory, a review's written feedback asks for no reflection", async () => {
    const id = await submitAlert(off, "Skilled", { pod: "payments-api", reason: "OOMKilled" });
    await waitStatus(off, id, ["completed"], 90_000);
    const done = await reviewAs(off, id, {
      action: "complete",
      quality_rating: "partially_accurate",
      investigation_feedback: FEEDBACK_ONE,
    });
    expect(done.body.results).toEqual([expect.objectContaining({ success: true })]);
    // Committed with the review or not at all: no reflection, no work, so no reflector call.
    expect(await reflectionsOf(off, id)).toEqual({ rows: [], queued: 0 });
    const session = (await off.api<SessionDetail>(`/api/v1/sessions/${id}`)).body;
    expect(session.stages.flatMap((s) => s.executions.map((e) => e.kind))).not.toContain(
      "feedback_reflection",
    );
    const memories = (await off.api<MemoryListResponse>("/api/v1/memories")).body;
    expect(memories.total).toBe(0);
  }, 120_000);
});
