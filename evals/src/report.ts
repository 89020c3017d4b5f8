/** The run's report: every result, and pass rates per provider and tag, durations and cost. */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CASE_STATUSES, type CaseResult, type CaseStatus } from "./run.ts";

export interface Group {
  key: string;
  runs: number;
  passed: number;
  pass_rate: number;
  by_status: Record<CaseStatus, number>;
}

export interface Report {
  created_at: string;
  provider: string;
  model: string;
  judge: string;
  iterations: number;
  cases: number;
  runs: number;
  passed: number;
  pass_rate: number;
  by_status: Record<CaseStatus, number>;
  by_provider: Group[];
  by_tag: Group[];
  duration_ms: { p50: number | null; p95: number | null };
  wall_time_ms: number;
  cost_usd: number;
  /** Runs with an LLM call no rate priced (their cost is a lower bound). */
  runs_not_fully_priced: number;
  tokens: { input: number; output: number; total: number };
  results: CaseResult[];
}

/** Nearest-rank percentile of what is known (null when nothing is). */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

function countStatuses(results: readonly CaseResult[]): Record<CaseStatus, number> {
  const counts = Object.fromEntries(CASE_STATUSES.map((s) => [s, 0])) as Record<CaseStatus, number>;
  for (const r of results) counts[r.status]++;
  return counts;
}

function group(key: string, results: readonly CaseResult[]): Group {
  const by_status = countStatuses(results);
  return {
    key,
    runs: results.length,
    passed: by_status.PASS,
    pass_rate: results.length ? by_status.PASS / results.length : 0,
    by_status,
  };
}

export function buildReport(
  results: readonly CaseResult[],
  meta: { provider: string; model: string; judge: string; iterations: number; wallTimeMs: number },
): Report {
  const providers = [...new Set(results.map((r) => `${r.provider}/${r.model}`))].sort();
  const tags = [...new Set(results.flatMap((r) => r.tags))].sort();
  const durations = results.flatMap((r) => (r.duration_ms === null ? [] : [r.duration_ms]));
  const by_status = countStatuses(results);
  return {
    created_at: new Date().toISOString(),
    provider: meta.provider,
    model: meta.model,
    judge: meta.judge,
    iterations: meta.iterations,
    cases: new Set(results.map((r) => r.case_id)).size,
    runs: results.length,
    passed: by_status.PASS,
    pass_rate: results.length ? by_status.PASS / results.length : 0,
    by_status,
    by_provider: providers.map((p) =>
      group(
        p,
        results.filter((r) => `${r.provider}/${r.model}` === p),
      ),
    ),
    by_tag: tags.map((t) =>
      group(
        t,
        results.filter((r) => r.tags.includes(t)),
      ),
    ),
    duration_ms: { p50: percentile(durations, 50), p95: percentile(durations, 95) },
    wall_time_ms: meta.wallTimeMs,
    cost_usd: results.reduce((sum, r) => sum + r.cost_usd, 0),
    runs_not_fully_priced: results.filter((r) => r.cost_completeness !== "complete").length,
    tokens: {
      input: results.reduce((sum, r) => sum + r.input_tokens, 0),
      output: results.reduce((sum, r) => sum + r.output_tokens, 0),
      total: results.reduce((sum, r) => sum + r.total_tokens, 0),
    },
    results: [...results],
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const ms = (x: number | null) => (x === null ? "–" : `${(x / 1000).toFixed(2)} s`);
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();

function groupTable(title: string, groups: readonly Group[]): string {
  const rows = groups.map(
    (g) =>
      `| ${cell(g.key)} | ${g.runs} | ${g.passed} | ${pct(g.pass_rate)} | ${g.by_status.FAIL} | ${g.by_status.FIXTURE_MISS} | ${g.by_status.ERROR} |`,
  );
  return [
    `## ${title}`,
    "",
    "| | runs | PASS | pass rate | FAIL | FIXTURE_MISS | ERROR |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

export function renderMarkdown(report: Report): string {
  const lines = [
    `# TARSy evaluation: ${report.provider}/${report.model}`,
    "",
    `${report.created_at} · judge: ${report.judge} · ${report.cases} cases × ${report.iterations} iteration(s)`,
    "",
    `**${report.passed}/${report.runs} PASS (${pct(report.pass_rate)})** · ` +
      `FAIL ${report.by_status.FAIL} · FIXTURE_MISS ${report.by_status.FIXTURE_MISS} · ERROR ${report.by_status.ERROR}`,
    "",
    `Duration per case p50 ${ms(report.duration_ms.p50)}, p95 ${ms(report.duration_ms.p95)} · ` +
      `wall time ${ms(report.wall_time_ms)} · cost $${report.cost_usd.toFixed(4)}` +
      (report.runs_not_fully_priced > 0
        ? ` (${report.runs_not_fully_priced} run(s) with unpriced LLM calls)`
        : "") +
      " · " +
      `tokens ${report.tokens.total} (in ${report.tokens.input}, out ${report.tokens.output})`,
    "",
    groupTable("By provider", report.by_provider),
    groupTable("By tag", report.by_tag),
    "## Cases",
    "",
    "| case | iteration | status | duration | tokens | cost | tools called | reason |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...report.results.map(
      (r) =>
        `| ${r.case_id} | ${r.iteration} | ${r.status} | ${ms(r.duration_ms)} | ${r.total_tokens} | $${r.cost_usd.toFixed(4)} | ${r.tool_calls.length} | ${cell(r.reason ?? "")} |`,
    ),
    "",
  ];
  const judged = report.results.filter((r) => r.judgement && r.status !== "PASS");
  if (judged.length > 0) {
    lines.push("## Verdicts of the cases that did not pass", "");
    for (const r of judged) {
      lines.push(`### ${r.case_id} (iteration ${r.iteration})`, "");
      for (const v of r.judgement?.expected ?? []) {
        lines.push(
          `- expected ${v.present ? "✅" : "❌"} ${v.finding}${v.evidence ? ` — “${cell(v.evidence)}”` : ""}`,
        );
      }
      for (const v of r.judgement?.forbidden ?? []) {
        lines.push(
          `- forbidden ${v.present ? "❌ claimed" : "✅ not claimed"} ${v.finding}${v.evidence ? ` — “${cell(v.evidence)}”` : ""}`,
        );
      }
      lines.push("");
    }
  }
  return lines.join("\n");
}

/** Writes `<name>.json` and `<name>.md` into `dir`; returns their paths. */
export function writeReport(
  dir: string,
  name: string,
  report: Report,
): { json: string; markdown: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${name}.json`);
  const markdown = join(dir, `${name}.md`);
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(markdown, renderMarkdown(report));
  return { json, markdown };
}
