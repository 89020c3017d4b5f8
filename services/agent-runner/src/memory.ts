/**
 * Investigation memory in the runner (#24, the Go TARSy's ADR-0014):
 * - injection: investigation and action agents get the project's most relevant memories for
 *   the alert in a "Lessons from Past Investigations" tier, and a `memory_injected` event;
 * - tools: `recall_past_investigations` (hybrid search of memories) and `search_past_sessions`
 *   (earlier sessions by the identifiers in their alerts, digested by one LLM call), answered
 *   by the runner itself like `load_skill`;
 * - the reflector: after a session is scored, one LLM call turns the investigation and its
 *   evaluation into new memories, and reinforces or deprecates existing ones.
 *
 * Everything is fail-open: a failed search, embedding or reflection is logged and the agent
 * (or the score) goes on without it. Cancellation still propagates.
 */
import type { EmbeddingConfig as EmbeddingSettings, MemoryConfig } from "@tarsy/config";
import {
  type FailureTag,
  type MemoryCategory,
  type ReflectorResult,
  ReflectorResultSchema,
} from "@tarsy/contracts";
import type { InvestigationMemory, NewMemory, ScoredMemory } from "@tarsy/db";
import type { EmbedTask, LlmClient } from "@tarsy/llm-client";
import { z } from "zod";
import { abortReasonOf } from "./errors.ts";
import { callLlm } from "./llm-call.ts";
import type { ToolCallResult, ToolDefinition, ToolGateway } from "./ports.ts";
import {
  lessonsSection,
  PAST_SESSIONS_SYSTEM_PROMPT,
  pastSessionsUserPrompt,
  RECALL_DESCRIPTION,
  RECALL_TOOL,
  REFLECTOR_SYSTEM_PROMPT,
  reflectorUserPrompt,
  SEARCH_SESSIONS_DESCRIPTION,
  SEARCH_SESSIONS_TOOL,
} from "./prompts/memory.ts";
import type { RunContext } from "./run-context.ts";

/** Confidence of a memory the reflector creates (the Go TARSy's flat 0.7). */
const EXTRACTED_CONFIDENCE = 0.7;
/** How much of the alert is the search text of the injection. */
const QUERY_CHARS = 4000;

/** What the runner needs of memory for one execution; absent when memory is off. */
export interface MemoryRuntime {
  config: MemoryConfig;
  project: string;
  alertType: string;
  chainId: string;
  /** Embeds texts; null when embedding failed (the search then uses keywords alone). */
  embed(texts: string[], task: EmbedTask, signal: AbortSignal): Promise<number[][] | null>;
}

/** The embedding model's identity: vectors are compared only within one. */
export function embeddingModelOf(settings: EmbeddingSettings): string {
  return `${settings.provider}/${settings.model}/${settings.dimensions}`;
}

/** Builds the runtime over llm-service's Embed RPC (null when memory is disabled). */
export function memoryRuntime(
  config: MemoryConfig,
  scope: { project: string; alertType: string; chainId: string; sessionId: string },
  embedder: Pick<LlmClient, "embed"> | undefined,
  logger: RunContext["logger"],
): MemoryRuntime | undefined {
  if (!config.enabled) return undefined;
  const settings = config.embedding;
  return {
    config,
    project: scope.project,
    alertType: scope.alertType,
    chainId: scope.chainId,
    async embed(texts, task, signal) {
      if (!embedder) return null;
      try {
        const { embeddings } = await embedder.embed(
          {
            config: {
              provider: settings.provider,
              model: settings.model,
              apiKeyEnv: settings.api_key_env,
              dimensions: settings.dimensions,
              ...(settings.base_url && { baseUrl: settings.base_url }),
            },
            texts,
            task,
            sessionId: scope.sessionId,
          },
          { signal, deadlineMs: 30_000 },
        );
        return embeddings;
      } catch (err) {
        if (signal.aborted) throw err;
        logger.warn({ err, provider: settings.provider }, "embedding failed; keywords only");
        return null;
      }
    },
  };
}

/** The project's memories best matching a text (hybrid search, the run's scope). */
export async function searchRunMemories(
  run: RunContext,
  memory: MemoryRuntime,
  text: string,
  limit: number,
  excludeIds: readonly string[] = [],
): Promise<ScoredMemory[]> {
  const [embedding] = (await memory.embed([text], "query", run.signal)) ?? [];
  return run.store.memories.search({
    project: memory.project,
    text,
    embedding: embedding ?? [],
    embeddingModel: embeddingModelOf(memory.config.embedding),
    alertType: memory.alertType,
    chainId: memory.chainId,
    limit,
    excludeIds,
  });
}

/**
 * Tier 4 for an investigation or action agent: the top `max_inject` memories for the alert,
 * recorded on the session with a `memory_injected` event. Returns the section (or nothing).
 */
export async function injectMemories(run: RunContext): Promise<string | undefined> {
  const memory = run.memory;
  if (!memory) return undefined;
  try {
    const text = `${run.exec.alertType}\n${run.exec.alertData}`.slice(0, QUERY_CHARS);
    const found = await searchRunMemories(run, memory, text, memory.config.max_inject);
    if (found.length === 0) return undefined;
    const ids = found.map((f) => f.memory.id);
    run.injectedMemoryIds = ids;
    await run.store.memories.recordInjected(run.exec.sessionId, ids);
    const section = lessonsSection(found.map((f) => f.memory));
    await run.timeline.create("memory_injected", {
      status: "completed",
      content: section ?? "",
      metadata: { memory_ids: ids, count: ids.length },
    });
    return section;
  } catch (err) {
    const aborted = abortReasonOf(run.signal);
    if (aborted) throw aborted;
    run.logger.warn({ err }, "memories not injected");
    return undefined;
  }
}

export const RECALL_DEFINITION: ToolDefinition = {
  name: RECALL_TOOL,
  server: "",
  tool: RECALL_TOOL,
  description: RECALL_DESCRIPTION,
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "What you want to know, in a few words" },
      limit: { type: "integer", description: "How many memories (default 10, at most 20)" },
    },
    required: ["query"],
  },
};

export const SEARCH_SESSIONS_DEFINITION: ToolDefinition = {
  name: SEARCH_SESSIONS_TOOL,
  server: "",
  tool: SEARCH_SESSIONS_TOOL,
  description: SEARCH_SESSIONS_DESCRIPTION,
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "Identifiers that must all appear in the alert" },
      alert_type: { type: "string", description: "Only sessions of this alert type" },
      days_back: { type: "integer", description: "How far back, in days (default 30)" },
      limit: { type: "integer", description: "How many sessions (default 5, at most 10)" },
    },
    required: ["query"],
  },
};

const RecallArgs = z.object({
  query: z.string().trim().min(1, "give a query"),
  limit: z.coerce.number().int().min(1).max(20).default(10),
});

const SearchSessionsArgs = z.object({
  query: z.string().trim().min(1, "give a query"),
  alert_type: z.string().trim().min(1).optional(),
  days_back: z.coerce.number().int().min(1).max(3650).default(30),
  limit: z.coerce.number().int().min(1).max(10).default(5),
});

function parseJson(raw: string): unknown {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function invalid(tool: string, error: z.ZodError | undefined): string {
  const problems = error
    ? error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ")
    : "not JSON";
  return `Invalid arguments for ${tool}: ${problems}`;
}

function recallLine(f: ScoredMemory): string {
  const m = f.memory;
  const similarity =
    f.similarity === null ? "keyword match" : `similarity ${f.similarity.toFixed(2)}`;
  return `- [${m.category}, ${m.valence}] ${m.content.trim()} (${similarity}, confidence ${m.confidence.toFixed(2)}, seen ${m.seenCount}×)`;
}

async function answerRecall(run: RunContext, memory: MemoryRuntime, raw: string) {
  const json = parseJson(raw);
  const args = RecallArgs.safeParse(json);
  if (!args.success) {
    return {
      content: invalid(RECALL_TOOL, json === undefined ? undefined : args.error),
      isError: true,
      args: json,
    };
  }
  const found = await searchRunMemories(
    run,
    memory,
    args.data.query,
    args.data.limit,
    run.injectedMemoryIds,
  );
  const content =
    found.length === 0
      ? `No memories match "${args.data.query}".`
      : `Memories from past investigations for "${args.data.query}":\n${found.map(recallLine).join("\n")}`;
  return { content, isError: false, args: args.data };
}

async function answerSearchSessions(run: RunContext, memory: MemoryRuntime, raw: string) {
  const json = parseJson(raw);
  const args = SearchSessionsArgs.safeParse(json);
  if (!args.success) {
    return {
      content: invalid(SEARCH_SESSIONS_TOOL, json === undefined ? undefined : args.error),
      isError: true,
      args: json,
    };
  }
  const sessions = await run.store.memories.searchPastSessions({
    project: memory.project,
    query: args.data.query,
    alertType: args.data.alert_type ?? null,
    daysBack: args.data.days_back,
    limit: args.data.limit,
    excludeSessionId: run.exec.sessionId,
  });
  if (sessions.length === 0) {
    return {
      content: `No past sessions in the last ${args.data.days_back} days have all of "${args.data.query}" in their alert.`,
      isError: false,
      args: args.data,
    };
  }
  const bundle = sessions
    .map((s) =>
      [
        `### Session ${s.id} (${s.createdAt.toISOString()}, ${s.alertType}, ${s.status})`,
        `Alert:\n${s.alertData.slice(0, 3000)}`,
        `Conclusion:\n${(s.finalAnalysis ?? "(none)").slice(0, 4000)}`,
        `Review: ${s.qualityRating ?? "not rated"}${s.investigationFeedback ? ` — ${s.investigationFeedback}` : ""}`,
      ].join("\n"),
    )
    .join("\n\n");
  const response = await callLlm(run, {
    messages: [
      { role: "system", content: PAST_SESSIONS_SYSTEM_PROMPT },
      { role: "user", content: pastSessionsUserPrompt(args.data.query, bundle) },
    ],
    tools: [],
    nativeTools: false,
    interactionType: "summarization",
    iteration: null,
    textEventType: "mcp_tool_summary",
    textEventMetadata: { tool_name: SEARCH_SESSIONS_TOOL, sessions: sessions.length },
    streamThinking: false,
    lastMessageId: null,
  });
  if (response.textEvent) await run.timeline.complete(response.textEvent);
  const digest = response.text.trim();
  if (!digest) throw new Error("the summary of the past sessions came back empty");
  return {
    content: `${sessions.length} past session(s) match "${args.data.query}":\n\n${digest}`,
    isError: false,
    args: args.data,
  };
}

/**
 * The execution's tools with the two memory tools in front (investigation, action and chat
 * agents, when memory is on): the runner answers them and passes every other call on.
 */
export function withMemoryTools(
  run: RunContext,
  tools: readonly ToolDefinition[],
  gateway: ToolGateway,
): { tools: ToolDefinition[]; gateway: ToolGateway } {
  const memory = run.memory;
  if (!memory) return { tools: [...tools], gateway };
  return {
    tools: [RECALL_DEFINITION, SEARCH_SESSIONS_DEFINITION, ...tools],
    gateway: {
      listTools: (scope, signal) => gateway.listTools(scope, signal),
      release: (executionId) => gateway.release(executionId),
      async callTool(scope, call, signal): Promise<ToolCallResult> {
        if (call.name !== RECALL_TOOL && call.name !== SEARCH_SESSIONS_TOOL) {
          return gateway.callTool(scope, call, signal);
        }
        const started = performance.now();
        let outcome: { content: string; isError: boolean; args: unknown };
        try {
          outcome =
            call.name === RECALL_TOOL
              ? await answerRecall(run, memory, call.arguments)
              : await answerSearchSessions(run, memory, call.arguments);
        } catch (err) {
          const aborted = abortReasonOf(run.signal);
          if (aborted) throw aborted;
          run.logger.warn({ err, tool: call.name }, "memory tool failed");
          outcome = {
            content: `${call.name} failed: ${err instanceof Error ? err.message : String(err)}`,
            isError: true,
            args: parseJson(call.arguments),
          };
        }
        const args = outcome.args;
        return {
          server: "",
          tool: call.name,
          arguments:
            typeof args === "object" && args !== null && !Array.isArray(args)
              ? (args as Record<string, unknown>)
              : undefined,
          content: outcome.content,
          isError: outcome.isError,
          durationMs: Math.round(performance.now() - started),
        };
      },
    },
  };
}

/**
 * The reflector's answer, read leniently: the whole text as JSON, then inside a fenced block,
 * then the outermost braces. Null when none of them is a reflector result.
 */
export function parseReflectorAnswer(text: string): ReflectorResult | null {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced?.[1]) candidates.push(fenced[1].trim());
  const first = text.indexOf("{");
  const last = text.lastIndexOf("}");
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  for (const candidate of candidates) {
    const json = parseJson(candidate);
    if (json === undefined) continue;
    const parsed = ReflectorResultSchema.safeParse(json);
    if (parsed.success) return parsed.data;
  }
  return null;
}

export interface ReflectorInput {
  investigation: string;
  finalAnalysis: string;
  score: number;
  failureTags: readonly FailureTag[];
  scoreAnalysis: string;
  toolImprovementReport: string;
}

export interface ReflectionOutcome {
  created: InvestigationMemory[];
  reinforced: number;
  deprecated: number;
}

/**
 * After a score: the reflector's call (interaction `memory_extraction`), then its actions —
 * new memories embedded and stored at confidence 0.7, confirmed ones reinforced, contradicted
 * ones deprecated (only ids it was shown). Fail-open: returns null on any failure but a
 * cancel.
 */
export async function reflect(
  run: RunContext,
  input: ReflectorInput,
): Promise<ReflectionOutcome | null> {
  const memory = run.memory;
  if (!memory) return null;
  try {
    const existing = (
      await searchRunMemories(
        run,
        memory,
        input.finalAnalysis,
        memory.config.reflector_memory_limit,
      )
    ).map((f) => f.memory);
    const response = await callLlm(run, {
      messages: [
        { role: "system", content: REFLECTOR_SYSTEM_PROMPT },
        {
          role: "user",
          content: reflectorUserPrompt({
            investigation: input.investigation,
            score: input.score,
            failureTags: input.failureTags,
            scoreAnalysis: input.scoreAnalysis,
            toolImprovementReport: input.toolImprovementReport,
            existing: existing.map((m) => ({
              id: m.id,
              content: m.content,
              category: m.category,
              valence: m.valence,
            })),
            alertType: memory.alertType,
            chainId: memory.chainId,
          }),
        },
      ],
      tools: [],
      nativeTools: false,
      interactionType: "memory_extraction",
      iteration: null,
      textEventType: "llm_response",
      textEventMetadata: { scoring_turn: "memory_extraction" },
      streamThinking: false,
      lastMessageId: null,
    });
    if (response.textEvent) await run.timeline.complete(response.textEvent);
    const result = parseReflectorAnswer(response.text);
    if (!result) {
      run.logger.warn(
        { length: response.text.length },
        "the reflector's answer is not a reflector result; no memories",
      );
      return { created: [], reinforced: 0, deprecated: 0 };
    }
    return await applyReflection(run, memory, result, new Set(existing.map((m) => m.id)));
  } catch (err) {
    const aborted = abortReasonOf(run.signal);
    if (aborted) throw aborted;
    run.logger.warn({ err }, "memory extraction failed; the score stands");
    return null;
  }
}

async function applyReflection(
  run: RunContext,
  memory: MemoryRuntime,
  result: ReflectorResult,
  shown: ReadonlySet<string>,
): Promise<ReflectionOutcome> {
  const creates = result.create;
  const vectors =
    creates.length > 0
      ? await memory.embed(
          creates.map((c) => c.content),
          "document",
          run.signal,
        )
      : [];
  const model = embeddingModelOf(memory.config.embedding);
  const fresh: NewMemory[] = creates.map((c, i) => ({
    content: c.content,
    category: c.category as MemoryCategory,
    valence: c.valence,
    confidence: EXTRACTED_CONFIDENCE,
    embedding: vectors?.[i] ?? [],
    embeddingModel: vectors?.[i] ? model : null,
  }));
  const created = await run.store.memories.create(
    {
      project: memory.project,
      sourceSessionId: run.exec.sessionId,
      alertType: memory.alertType,
      chainId: memory.chainId,
    },
    fresh,
  );
  // Only memories the reflector was shown: an invented id changes nothing.
  const onlyShown = (ids: string[]) => ids.filter((id) => shown.has(id));
  const reinforced = await run.store.memories.reinforce(
    memory.project,
    onlyShown(result.reinforce.map((r) => r.memory_id)),
  );
  const deprecated = await run.store.memories.deprecate(
    memory.project,
    onlyShown(result.deprecate.map((d) => d.memory_id)),
  );
  run.logger.info(
    { created: created.length, reinforced, deprecated },
    "memories extracted from the scored session",
  );
  if (created.length > 0) await indexMemoryVectors(run);
  return { created, reinforced, deprecated };
}

/**
 * With pgvector, indexes the embedding dimensions new memories brought. Fail-open: the
 * memories are stored either way, and search without an index still ranks them (by a scan).
 */
export async function indexMemoryVectors(run: RunContext): Promise<void> {
  try {
    const dims = await run.store.memories.indexVectors();
    if (dims.length > 0) run.logger.info({ dims }, "memory embeddings indexed (pgvector HNSW)");
  } catch (err) {
    run.logger.warn({ err }, "memory embeddings not indexed; search scans them");
  }
}
