import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { CancelledError, ConfigError, ScriptExhaustedError } from "../errors.ts";
import type { Chunk, GenerateRequest } from "../request.ts";
import { matches, parseScript, type Script, type ScriptEntry } from "./script.ts";
import type { Backend, BackendContext } from "./types.ts";

export interface ScriptedBackendOptions {
  /** The script from LLM_SCRIPT_PATH, if any; a request's inline llm_config.script wins. */
  defaultScript?: Script;
  /** Cursor entries kept (one per script × session × rule); the oldest are forgotten. */
  maxCursors?: number;
}

function approxTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new CancelledError("request cancelled by the caller");
  }
}

const RESULT_REFERENCE = /\{\{result:([^.}]+)\.([A-Za-z0-9_]+)\}\}/g;

/** A tool result the runner fenced as untrusted data, as the tool returned it. */
function unfenced(content: string): string {
  const fence = /^<untrusted_data[^>]*>\n([\s\S]*)\n<\/untrusted_data>$/.exec(content);
  return fence ? (fence[1] ?? "") : content;
}

/**
 * Fills `{{result:<call id>.<field>}}` in a scripted tool call's arguments with that field of
 * the JSON result of the earlier tool call `<call id>` in the conversation (an id a tool
 * returned, such as a sub-agent's execution id, can then be passed on). Left as written when
 * there is no such result or field.
 */
export function fillResultReferences(
  argumentsText: string,
  messages: GenerateRequest["messages"],
): string {
  return argumentsText.replace(RESULT_REFERENCE, (whole, callId: string, field: string) => {
    const result = messages.find((m) => m.role === "tool" && m.tool_call_id === callId);
    if (!result) return whole;
    try {
      const value = (JSON.parse(unfenced(result.content)) as Record<string, unknown>)[field];
      return typeof value === "string" || typeof value === "number" ? String(value) : whole;
    } catch {
      return whole;
    }
  });
}

/** Every message the model was sent, whatever its role, as one text. */
function everythingSeen(messages: GenerateRequest["messages"]): string {
  return messages.map((m) => m.content).join("\n");
}

const SEEN_REFERENCE = /\{\{seen:(.+?)\}\}/g;
/** What a `{{seen:…}}` fills in when nothing the model was sent matches. */
export const NOT_SEEN = "(not seen)";

/**
 * Fills `{{seen:<regex>}}` in a scripted answer (its text or a tool call's arguments) with what
 * the model was sent: the regex's first capture group (or whole match) in the request's
 * messages, so a script can copy what it read (a name from a log, a value from a tool result)
 * as a model that follows instructions literally would. JSON-escaped inside arguments.
 */
export function fillSeenReferences(
  text: string,
  messages: GenerateRequest["messages"],
  json: boolean,
): string {
  if (!text.includes("{{seen:")) return text;
  const seen = everythingSeen(messages);
  return text.replace(SEEN_REFERENCE, (_whole, written: string) => {
    // Inside JSON arguments the pattern is JSON-escaped as well.
    const pattern = json ? (JSON.parse(`"${written}"`) as string) : written;
    const found = new RegExp(pattern).exec(seen);
    const value = found ? (found[1] ?? found[0]) : NOT_SEEN;
    return json ? JSON.stringify(value).slice(1, -1) : value;
  });
}

/**
 * A deterministic LLM for tests and demos. Each request takes the next entry of the first
 * rule queue (agent / system prompt / last user message / anything it was sent) that matches it and still has
 * entries, else of the default queue. Cursors are kept per script and session, so every
 * session replays the script from its start and parallel agents routed by rules get their
 * own answers whatever order their requests arrive in. Selection is synchronous, so
 * concurrent requests never take the same entry. A `repeat` entry, once reached, answers every
 * further request of its queue.
 */
export function createScriptedBackend(options: ScriptedBackendOptions): Backend {
  const cursors = new Map<string, number>();
  const inlineScripts = new Map<string, Script>();
  const maxCursors = options.maxCursors ?? 10_000;

  const scriptFor = (request: GenerateRequest): Script => {
    const inline = request.llm_config.script;
    if (inline) {
      const cached = inlineScripts.get(inline);
      if (cached) return cached;
      let script: Script;
      try {
        script = parseScript(inline, "llm_config.script");
      } catch (err) {
        throw new ConfigError((err as Error).message);
      }
      inlineScripts.set(inline, script);
      if (inlineScripts.size > 256) inlineScripts.delete(inlineScripts.keys().next().value ?? "");
      return script;
    }
    if (options.defaultScript) return options.defaultScript;
    throw new ConfigError(
      "scripted backend has no script: set LLM_SCRIPT_PATH for llm-service or pass llm_config.script",
    );
  };

  const take = (script: Script, request: GenerateRequest): ScriptEntry => {
    const system = request.messages
      .filter((m) => m.role === "system")
      .map((m) => m.content)
      .join("\n");
    const user = request.messages.findLast((m) => m.role === "user")?.content ?? "";
    // Everything the request carries, joined only when a rule asks (`match.seen`).
    let everything: string | undefined;
    const seen = () => {
      everything ??= everythingSeen(request.messages);
      return everything;
    };
    for (const [index, queue] of script.queues.entries()) {
      const rule = queue.match;
      if (
        rule &&
        !(
          matches(rule.agent, request.agent_name) &&
          matches(rule.system, system) &&
          matches(rule.user, user) &&
          (rule.seen === undefined || matches(rule.seen, seen()))
        )
      ) {
        continue;
      }
      const key = `${script.id}|${request.session_id}|${index}`;
      const cursor = cursors.get(key) ?? 0;
      const entry = queue.entries[cursor];
      if (!entry) continue;
      cursors.delete(key);
      cursors.set(key, entry.repeat ? cursor : cursor + 1);
      if (cursors.size > maxCursors) cursors.delete(cursors.keys().next().value ?? "");
      return entry;
    }
    throw new ScriptExhaustedError(
      `scripted LLM: script exhausted for session "${request.session_id}" agent "${request.agent_name}" ` +
        "(no remaining entry matches this request): add responses to the script",
    );
  };

  return {
    name: "scripted",
    retriesTransientErrors: false,
    async *generate(request: GenerateRequest, ctx: BackendContext): AsyncIterable<Chunk> {
      const entry = take(scriptFor(request), request);
      await pause(entry.delay_ms, ctx.signal);
      if (entry.error) {
        yield { error: { ...entry.error } };
        return;
      }
      if (entry.thinking) yield { thinking: { content: entry.thinking } };
      for (const block of entry.reasoning) yield { reasoning: { ...block } };
      for (const exec of entry.code_executions) yield { code_execution: { ...exec } };
      if (entry.text) {
        const text = fillSeenReferences(entry.text, request.messages, false);
        const size = entry.chunk_size ?? text.length;
        for (let at = 0; at < text.length; at += size) {
          if (at > 0) await pause(entry.chunk_delay_ms, ctx.signal);
          yield { text: { content: text.slice(at, at + size) } };
        }
      }
      for (const call of entry.tool_calls) {
        yield {
          tool_call: {
            call_id: call.id ?? `call_${randomUUID()}`,
            name: call.name,
            arguments: fillSeenReferences(
              fillResultReferences(
                typeof call.arguments === "string"
                  ? call.arguments
                  : JSON.stringify(call.arguments),
                request.messages,
              ),
              request.messages,
              true,
            ),
            ...(call.thought_signature ? { thought_signature: call.thought_signature } : {}),
          },
        };
      }
      const input = approxTokens(request.messages.map((m) => m.content).join("\n"));
      const output = approxTokens(`${entry.text ?? ""}${JSON.stringify(entry.tool_calls)}`);
      const usage = entry.usage ?? {
        input_tokens: input,
        output_tokens: output,
        thinking_tokens: 0,
        cache_read_tokens: 0,
        cache_creation_tokens: 0,
      };
      const prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens;
      yield {
        usage: {
          input_tokens: usage.input_tokens,
          output_tokens: usage.output_tokens,
          thinking_tokens: usage.thinking_tokens,
          total_tokens: prompt + usage.output_tokens + usage.thinking_tokens,
          cache_read_tokens: usage.cache_read_tokens,
          cache_creation_tokens: usage.cache_creation_tokens,
        },
      };
    },
  };
}
