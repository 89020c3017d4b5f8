/** A strict reader of the Prometheus text exposition format (version 0.0.4), for tests. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

/**
 * A value as Go's ParseFloat reads it (the format's rule): besides numbers, NaN and [+-]Inf in
 * any case (prom-client writes `Nan` for an event-loop lag with no samples yet).
 */
function parseValue(text: string, line: string): number {
  if (/^[+]?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value in: ${line}`);
  return value;
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`malformed labels in: ${line}`);
    const [, name = "", raw = ""] = match;
    labels[name] = raw.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
  }
  return labels;
}

/** Every sample of an exposition; throws on any line that is neither a comment nor a sample. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const [, name = "", labels, value = ""] = match;
    samples.push({
      name,
      labels: labels ? parseLabels(labels, line) : {},
      value: parseValue(value, line),
    });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `labels` (0 when none exists). */
export function total(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Every process's parsed /metrics, by process name (`agent-runner-0`, `ingest-api`, …). */
export type Scrapes = Record<string, Sample[]>;

/** The service a process of the stack belongs to: `agent-runner-0` → `agent-runner`. */
export const serviceOf = (process: string): string => process.replace(/-\d+$/, "");

/** Scrapes every process's /metrics. */
export async function scrapeProcesses(urls: Record<string, string>): Promise<Scrapes> {
  const entries = await Promise.all(
    Object.entries(urls).map(
      async ([name, url]) => [name, parseExposition(await (await fetch(url)).text())] as const,
    ),
  );
  return Object.fromEntries(entries);
}

/** Sum of a series over every process of `service`. */
export function serviceTotal(
  scrapes: Scrapes,
  service: string,
  name: string,
  labels: Record<string, string> = {},
): number {
  return Object.entries(scrapes)
    .filter(([process]) => serviceOf(process) === service)
    .reduce((n, [, samples]) => n + total(samples, name, labels), 0);
}
