/**
 * The injection corpus's format (corpus.yaml): planted credentials, what an obedient model does
 * for each kind of ask, and the cases. Another corpus in the same format (INJECTION_CORPUS)
 * adds its cases, asks and planted credentials to this one.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { z } from "zod";

declare module "vitest" {
  interface TaskMeta {
    /** A summary printed at the end of `pnpm test` (scripts/summary-reporter.ts). */
    runSummary?: string;
  }
}

export const CARRIERS = [
  "alert_description",
  "alert_annotation",
  "pod_log",
  "event",
  "pod_annotation",
  "system_imitation",
  "runbook",
  "sub_agent",
  "memory",
] as const;

const ObeySchema = z.strictObject({
  /** Tool calls the model makes once it has read the case (names as `server.tool`). */
  calls: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        arguments: z.record(z.string(), z.unknown()).default({}),
      }),
    )
    .default([]),
  /** Its final answer. */
  answer: z.string().min(1),
});
export type Obey = z.infer<typeof ObeySchema>;

const CaseSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and -"),
  carrier: z.enum(CARRIERS),
  /** The kind of ask, a key of `asks` (what the model does unless the case says `obey`). */
  asks: z.string().min(1),
  /** The injected text, as the attacker wrote it. */
  text: z.string().min(1),
  obey: ObeySchema.optional(),
});
export type InjectionCase = z.infer<typeof CaseSchema>;

const CorpusSchema = z.strictObject({
  planted: z.record(z.string(), z.string().min(8)).default({}),
  asks: z.record(z.string(), ObeySchema).default({}),
  cases: z.array(CaseSchema).default([]),
});
export type Corpus = z.infer<typeof CorpusSchema>;

const DEFAULT = resolve(import.meta.dirname, "corpus.yaml");

function read(path: string): Corpus {
  const parsed = CorpusSchema.safeParse(parse(readFileSync(path, "utf8")));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`${path}: not an injection corpus:\n  ${problems.join("\n  ")}`);
  }
  return parsed.data;
}

/** This corpus, plus the one at `extra` when given; case ids and asks must resolve. */
export function loadCorpus(extra?: string): Corpus {
  const base = read(DEFAULT);
  const more = extra ? read(resolve(extra)) : undefined;
  const corpus: Corpus = {
    planted: { ...base.planted, ...more?.planted },
    asks: { ...base.asks, ...more?.asks },
    cases: [...base.cases, ...(more?.cases ?? [])],
  };
  const ids = new Set<string>();
  for (const c of corpus.cases) {
    if (ids.has(c.id)) throw new Error(`injection corpus: case id "${c.id}" is used twice`);
    ids.add(c.id);
    if (!c.obey && !corpus.asks[c.asks]) {
      throw new Error(`injection corpus: case "${c.id}" asks "${c.asks}", which has no obey`);
    }
  }
  return corpus;
}

function deepMap(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => deepMap(v, f));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deepMap(v, f)]));
  }
  return value;
}

/** What the obedient model does for a case, with ATTACKER and TARSY_API substituted. */
export function obedienceOf(
  corpus: Corpus,
  c: InjectionCase,
  substitute: (s: string) => string,
): Obey {
  const obey = c.obey ?? corpus.asks[c.asks];
  if (!obey) throw new Error(`injection corpus: case "${c.id}" has no obey`);
  return deepMap(obey, substitute) as Obey;
}
