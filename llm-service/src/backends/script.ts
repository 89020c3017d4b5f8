import { createHash } from "node:crypto";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

/** A string matcher: plain text matches as a substring; "/pattern/flags" is a regex. */
const MatcherSchema = z.string().min(1);

const MatchSchema = z
  .object({
    agent: MatcherSchema.optional(),
    system: MatcherSchema.optional(),
    user: MatcherSchema.optional(),
    /** Anything the model was sent: every message of the request, whatever its role. */
    seen: MatcherSchema.optional(),
  })
  .strict();

const ScriptToolCallSchema = z.object({
  id: z.string().optional(),
  name: z.string().min(1),
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).default({}),
  /** Opaque signature sent with the call (as Gemini does), to exercise reasoning continuity. */
  thought_signature: z.string().min(1).optional(),
});

export const ScriptEntrySchema = z
  .object({
    match: MatchSchema.optional(),
    thinking: z.string().optional(),
    /** Signed reasoning blocks (as Anthropic sends them), streamed after `thinking`. */
    reasoning: z
      .array(
        z
          .object({
            thinking: z.string().default(""),
            signature: z.string().default(""),
            redacted_data: z.string().default(""),
          })
          .strict(),
      )
      .default([]),
    text: z.string().optional(),
    tool_calls: z.array(ScriptToolCallSchema).default([]),
    code_executions: z
      .array(z.object({ code: z.string().default(""), result: z.string().default("") }))
      .default([]),
    usage: z
      .object({
        input_tokens: z.number().int().nonnegative().default(0),
        output_tokens: z.number().int().nonnegative().default(0),
        thinking_tokens: z.number().int().nonnegative().default(0),
        /** Prompt-cache reads and writes, apart from (uncached) input_tokens. */
        cache_read_tokens: z.number().int().nonnegative().default(0),
        cache_creation_tokens: z.number().int().nonnegative().default(0),
      })
      .optional(),
    error: z
      .object({
        message: z.string(),
        code: z.string().default("scripted_error"),
        retryable: z.boolean().default(false),
      })
      .optional(),
    delay_ms: z.number().int().nonnegative().default(0),
    /** Answers every further request of its queue once reached (a script for any number of calls). */
    repeat: z.boolean().default(false),
    chunk_size: z.number().int().positive().optional(),
    chunk_delay_ms: z.number().int().nonnegative().default(0),
  })
  .strict();
export type ScriptEntry = z.infer<typeof ScriptEntrySchema>;

export const ScriptSchema = z.union([
  z.array(ScriptEntrySchema),
  z.object({ responses: z.array(ScriptEntrySchema) }).transform((s) => s.responses),
]);

/** Entries grouped by identical match rule, each group consumed in order. */
export interface Script {
  id: string;
  queues: { match: ScriptEntry["match"]; entries: ScriptEntry[] }[];
}

export class ScriptFormatError extends Error {
  readonly code = "script_invalid" as const;
}

export function parseScript(source: string, origin: string): Script {
  let raw: unknown;
  try {
    raw = parseYaml(source); // YAML is a superset of JSON
  } catch (err) {
    throw new ScriptFormatError(`${origin}: not valid YAML/JSON: ${(err as Error).message}`);
  }
  const parsed = ScriptSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new ScriptFormatError(`${origin}: invalid script:\n  ${issues.join("\n  ")}`);
  }
  const queues: Script["queues"] = [];
  const byRule = new Map<string, Script["queues"][number]>();
  for (const entry of parsed.data) {
    const key = JSON.stringify(entry.match ?? null);
    let queue = byRule.get(key);
    if (!queue) {
      queue = { match: entry.match, entries: [] };
      byRule.set(key, queue);
      queues.push(queue);
    }
    queue.entries.push(entry);
  }
  // Rules before the default (no match) queue, otherwise in order of appearance.
  queues.sort((a, b) => Number(a.match === undefined) - Number(b.match === undefined));
  return { id: createHash("sha256").update(source).digest("hex").slice(0, 16), queues };
}

export function matches(matcher: string | undefined, value: string): boolean {
  if (matcher === undefined) return true;
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(matcher);
  if (regex) return new RegExp(regex[1] ?? "", regex[2]).test(value);
  return value.includes(matcher);
}
