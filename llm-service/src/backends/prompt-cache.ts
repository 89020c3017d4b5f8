import type { JSONValue } from "ai";
import type { GenerateRequest, LlmConfig } from "../request.ts";
import type { ProviderCallOptions } from "./ai-sdk-models.ts";

type PromptMessage = ProviderCallOptions["prompt"][number];
type FunctionTool = Extract<
  NonNullable<ProviderCallOptions["tools"]>[number],
  { type: "function" }
>;
type ProviderOptions = Record<string, Record<string, JSONValue>>;

/**
 * Provider prompt caching (ADR-0026 of the Go TARSy), applied per request:
 *
 * - Anthropic (API and Vertex Claude), `prompt_cache` set: `cache_control` {ephemeral, 1h} on
 *   the LAST TOOL only, so the tool schemas (rendered before the system prompt) are written
 *   once and read on every later turn. No tools, no breakpoint.
 * - OpenAI: `prompt_cache_key` = execution_id on eligible calls. GPT-5.6 and later always get
 *   `prompt_cache_options` {explicit, 30m} (no implicit last-message write); eligible calls add
 *   explicit breakpoints on the system message(s), the first user message and the last tool
 *   result. Chat-completions tools take no breakpoint.
 * - Gemini caches implicitly: nothing is sent, the usage is read.
 */
export interface PromptCachePlan {
  /** Call-level provider options to merge with the thinking options. */
  callOptions: ProviderOptions;
  /** Provider options of the last tool. */
  lastToolOptions?: ProviderOptions;
  /** Indexes of the prompt messages that get `messageOptions`. */
  markedMessages: number[];
  messageOptions?: ProviderOptions;
}

const ANTHROPIC_CACHE_CONTROL = { type: "ephemeral", ttl: "1h" } as const;
const OPENAI_EXPLICIT = { mode: "explicit", ttl: "30m" } as const;
const OPENAI_BREAKPOINT = { mode: "explicit" } as const;

/** GPT-5.6 and later (gpt-5.6, gpt-5.6-sol, gpt-6 …): explicit prompt-cache mode exists. */
export function supportsOpenAiExplicitCache(model: string): boolean {
  const m = /^gpt-(\d+)(?:\.(\d+))?/i.exec(model);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = m[2] === undefined ? 0 : Number(m[2]);
  return major > 5 || (major === 5 && minor >= 6);
}

export function promptCachePlan(
  request: GenerateRequest,
  family: string,
  config: LlmConfig,
): PromptCachePlan {
  const none: PromptCachePlan = { callOptions: {}, markedMessages: [] };
  const eligible = request.prompt_cache;
  if (family === "anthropic") {
    if (!eligible || request.tools.length === 0) return none;
    return {
      ...none,
      lastToolOptions: { anthropic: { cacheControl: ANTHROPIC_CACHE_CONTROL } },
    };
  }
  if (family !== "openai" || config.provider !== "openai") return none;
  const key = request.execution_id;
  if (!supportsOpenAiExplicitCache(config.model)) {
    return eligible && key ? { ...none, callOptions: { openai: { promptCacheKey: key } } } : none;
  }
  const openai: Record<string, JSONValue> = { promptCacheOptions: OPENAI_EXPLICIT };
  if (key) openai.promptCacheKey = key;
  if (!eligible) return { ...none, callOptions: { openai } };
  const marked: number[] = [];
  const firstUser = request.messages.findIndex((m) => m.role === "user");
  let lastTool = -1;
  request.messages.forEach((m, i) => {
    if (m.role === "system") marked.push(i);
    if (m.role === "tool") lastTool = i;
  });
  if (firstUser >= 0) marked.push(firstUser);
  if (lastTool >= 0) marked.push(lastTool);
  return {
    callOptions: { openai },
    markedMessages: marked,
    messageOptions: { openai: { promptCacheBreakpoint: OPENAI_BREAKPOINT } },
  };
}

/** The prompt with the plan's breakpoints on its messages. */
export function markPrompt(prompt: PromptMessage[], plan: PromptCachePlan): PromptMessage[] {
  if (!plan.messageOptions || plan.markedMessages.length === 0) return prompt;
  const options = plan.messageOptions;
  return prompt.map((message, i) => {
    if (!plan.markedMessages.includes(i)) return message;
    // The OpenAI chat converter reads a system message's breakpoint from the message, a user
    // message's and a tool result's from their parts.
    switch (message.role) {
      case "user":
        return {
          ...message,
          content: message.content.map((part) => ({ ...part, providerOptions: options })),
        };
      case "tool":
        return {
          ...message,
          content: message.content.map((part) => ({ ...part, providerOptions: options })),
        };
      default:
        return { ...message, providerOptions: options };
    }
  });
}

/** The tools with the plan's breakpoint on the last one. */
export function markTools(tools: FunctionTool[], plan: PromptCachePlan): FunctionTool[] {
  const options = plan.lastToolOptions;
  if (!options || tools.length === 0) return tools;
  return tools.map((tool, i) =>
    i === tools.length - 1 ? { ...tool, providerOptions: options } : tool,
  );
}

/** Merges two provider-options objects one provider key deep. */
export function mergeProviderOptions(a: ProviderOptions, b: ProviderOptions): ProviderOptions {
  const out: ProviderOptions = { ...a };
  for (const [provider, options] of Object.entries(b)) {
    out[provider] = { ...out[provider], ...options };
  }
  return out;
}

const NO_CACHE: PromptCachePlan = { callOptions: {}, markedMessages: [] };

/**
 * What to try after a provider refused the cache markers with a 400 (ADR-0026 Q5): Anthropic
 * first without the `ttl` (5-minute entries: older Claude on Vertex rejects 1h), then with no
 * marker at all; OpenAI with no cache option at all (older models reject the explicit fields).
 * Empty when the plan sends nothing a provider could reject (no marker, or only a
 * `prompt_cache_key`).
 */
export function degradedPlans(plan: PromptCachePlan): PromptCachePlan[] {
  // prompt_cache_key alone is a routing hint every OpenAI model takes: a 400 is about
  // something else then, and fails as any other.
  const marked =
    plan.lastToolOptions !== undefined ||
    plan.markedMessages.length > 0 ||
    plan.callOptions.openai?.promptCacheOptions !== undefined;
  if (!marked) return [];
  if (plan.lastToolOptions?.anthropic) {
    return [
      { ...plan, lastToolOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } },
      NO_CACHE,
    ];
  }
  return [NO_CACHE];
}

/** A provider's 400 (bad request), thrown before any chunk. */
export function isBadRequest(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { statusCode?: unknown; status?: unknown };
  return e.statusCode === 400 || e.status === 400;
}
