/**
 * Keeps test/e2e/PARITY.md honest. Pure file reading: no stack, no database.
 *
 * Every row of the table maps one end-to-end test of the reference (the Go TARSy's
 * test/e2e/*_test.go) to ours: test titles that exist, word for word, in the files named, or
 * the open issue that will bring it. The summary line under the table must add up.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const ROOT = join(import.meta.dirname, "..", "..");
const PARITY = join(import.meta.dirname, "PARITY.md");
const HEADER_CELLS = ["Reference test", "Behaviour it asserts", "Ours"];
const HEADER = `| ${HEADER_CELLS.join(" | ")} |`;

/**
 * The open issues a row may name for what is still to come. Keep in step with the tracker:
 * #22 fast critical path; #24
 * sub-agents/orchestrator, skills, action stages, memory; #25 traces and resume; #30 actions
 * a team can trust; #31 the Go TARSy's autumn releases. When an issue closes, its rows must
 * cite tests instead — drop it here and this test names every row still pointing at it.
 */
const OPEN_ISSUES = new Set([22, 24, 25, 30, 31]);

interface Citation {
  file: string;
  title: string;
}
type Ours =
  | { kind: "issue"; issue: number }
  | { kind: "tests"; partly: boolean; citations: Citation[]; rest: number[] };

interface Row {
  line: number;
  reference: string;
  behaviour: string;
  ours: Ours;
}

const RowCells = z.tuple([
  z
    .string()
    .regex(/^[a-z0-9_]+_test\.go: Test\w+$/, "Reference test must read `file_test.go: TestName`"),
  z.string().min(1, "Behaviour it asserts is empty"),
  z.string().min(1, "Ours is empty"),
]);

const CITATION = /^`([^`]+)`: "(.+)"$/;
const ISSUE = /^#(\d+)$/;
const REST = /^(.*\S)\s*; rest (#\d+(?:, #\d+)*)$/;

/** Parses an "Ours" cell; throws with a readable reason when it has no known shape. */
function parseOurs(cell: string): Ours {
  const issue = ISSUE.exec(cell);
  if (issue) return { kind: "issue", issue: Number(issue[1]) };
  const partly = cell.startsWith("partly: ");
  let body = partly ? cell.slice("partly: ".length) : cell;
  let rest: number[] = [];
  const restMatch = REST.exec(body);
  if (restMatch) {
    if (!partly) throw new Error('"; rest #NN" without "partly: "');
    body = restMatch[1] ?? "";
    rest = (restMatch[2] ?? "").split(", ").map((s) => Number(s.slice(1)));
  } else if (partly) {
    throw new Error('"partly: " must end with "; rest #NN" naming the issue for the rest');
  }
  const citations = body.split("<br>").map((part) => {
    const m = CITATION.exec(part.trim());
    if (!m) throw new Error(`not \`path\`: "title" — ${JSON.stringify(part.trim())}`);
    return { file: m[1] ?? "", title: m[2] ?? "" };
  });
  return { kind: "tests", partly, citations, rest };
}

/** Splits a table line into its cells on unescaped pipes; `\|` stands for a literal pipe. */
function cellsOf(line: string): string[] {
  const inner = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replaceAll("\\|", "|"));
}

/** The table rows and the summary line of PARITY.md, with every problem found on the way. */
function readTable(text: string): {
  rows: Row[];
  summary: string | undefined;
  problems: string[];
} {
  const lines = text.split("\n");
  const problems: string[] = [];
  const rows: Row[] = [];
  // biome pads the cells to align the columns, so the header is found by its cells.
  const start = lines.findIndex((l) => cellsOf(l).join("|") === HEADER_CELLS.join("|"));
  if (start < 0) return { rows, summary: undefined, problems: [`no table header ${HEADER}`] };
  if (!/^\|(\s*:?-{3,}:?\s*\|){3}$/.test(lines[start + 1]?.trim() ?? "")) {
    problems.push(`line ${start + 2}: the header is not followed by a separator row`);
  }
  let i = start + 2;
  for (; i < lines.length && lines[i]?.trim().startsWith("|"); i++) {
    const line = i + 1;
    const cells = RowCells.safeParse(cellsOf(lines[i] ?? ""));
    if (!cells.success) {
      const why = cells.error.issues.map((x) => x.message).join("; ");
      problems.push(`line ${line}: ${why} — ${lines[i]?.slice(0, 80)}`);
      continue;
    }
    const [reference, behaviour, oursCell] = cells.data;
    try {
      rows.push({ line, reference, behaviour, ours: parseOurs(oursCell) });
    } catch (e) {
      problems.push(`${reference}: Ours ${(e as Error).message}`);
    }
  }
  const summary = lines.slice(i).find((l) => l.startsWith("Summary:"));
  return { rows, summary, problems };
}

const TITLE =
  /\b(?:it|test)(?:\.(?:only|skip|todo|fails|concurrent|sequential))*\(\s*(["'`])((?:\\[\s\S]|(?!\1)[^\\])*)\1/g;

/** Every it()/test() title of a test file, as written (escapes undone), however biome wraps it. */
function titlesOf(source: string): Set<string> {
  const titles = new Set<string>();
  for (const m of source.matchAll(TITLE)) titles.add((m[2] ?? "").replace(/\\([\s\S])/g, "$1"));
  return titles;
}

function check(text: string): string[] {
  const { rows, summary, problems } = readTable(text);
  if (rows.length === 0) problems.push("the table has no rows");
  const seen = new Map<string, number>();
  const sources = new Map<string, Set<string> | undefined>();
  const titles = (file: string) => {
    if (!sources.has(file)) {
      const path = join(ROOT, file);
      sources.set(file, existsSync(path) ? titlesOf(readFileSync(path, "utf8")) : undefined);
    }
    return sources.get(file);
  };
  for (const row of rows) {
    const name = row.reference;
    const first = seen.get(name);
    if (first !== undefined) problems.push(`${name}: duplicated (lines ${first} and ${row.line})`);
    else seen.set(name, row.line);
    const issues = row.ours.kind === "issue" ? [row.ours.issue] : row.ours.rest;
    for (const n of issues) {
      if (!OPEN_ISSUES.has(n)) problems.push(`${name}: #${n} is not one of the open issues`);
    }
    if (row.ours.kind === "tests") {
      for (const { file, title } of row.ours.citations) {
        const found = titles(file);
        if (!/\.test\.ts$/.test(file)) problems.push(`${name}: ${file} is not a test file`);
        else if (found === undefined)
          problems.push(`${name}: ${file} does not exist (cited for "${title}")`);
        else if (!found.has(title)) problems.push(`${name}: ${file} has no test "${title}"`);
      }
    }
  }
  const equivalent = rows.filter((r) => r.ours.kind === "tests" && !r.ours.partly).length;
  const partly = rows.filter((r) => r.ours.kind === "tests" && r.ours.partly).length;
  const toCome = rows.filter((r) => r.ours.kind === "issue").length;
  const want = `Summary: ${rows.length} reference tests, ${equivalent} equivalent, ${partly} partly, ${toCome} to come.`;
  if (summary !== want) problems.push(`summary line is ${JSON.stringify(summary)}, want "${want}"`);
  return problems;
}

describe("test/e2e/PARITY.md", () => {
  it("maps every reference e2e test once, to titles that exist or an open issue, and adds up", () => {
    expect(check(readFileSync(PARITY, "utf8"))).toEqual([]);
  });

  it("catches what a table could lie about, all at once", () => {
    const table = [
      HEADER,
      "| --- | --- | --- |",
      '| a_test.go: TestA | x | `test/e2e/parity-table.test.ts`: "no such title" |',
      '| a_test.go: TestA | x | `test/e2e/nowhere.test.ts`: "t" |',
      "| b_test.go: TestB | x | #7 |",
      '| c_test.go: TestC | x | partly: `test/e2e/parity-table.test.ts`: "catches what a table could lie about, all at once" |',
      "| d.go: TestD | x | #20 |",
      "",
      "Summary: 9 reference tests, 0 equivalent, 0 partly, 9 to come.",
    ].join("\n");
    expect(check(table)).toEqual([
      'c_test.go: TestC: Ours "partly: " must end with "; rest #NN" naming the issue for the rest',
      "line 7: Reference test must read `file_test.go: TestName` — | d.go: TestD | x | #20 |",
      'a_test.go: TestA: test/e2e/parity-table.test.ts has no test "no such title"',
      "a_test.go: TestA: duplicated (lines 3 and 4)",
      'a_test.go: TestA: test/e2e/nowhere.test.ts does not exist (cited for "t")',
      "b_test.go: TestB: #7 is not one of the open issues",
      'summary line is "Summary: 9 reference tests, 0 equivalent, 0 partly, 9 to come.", want "Summary: 3 reference tests, 2 equivalent, 0 partly, 1 to come."',
    ]);
  });

  it("finds titles however they are quoted or wrapped", () => {
    const source = [
      'it("plain", () => {});',
      "test.skip('single \\'quoted\\'', () => {});",
      "it(\n  `backtick`,\n  async () => {},\n);",
      'it(\n    "wrapped by the formatter onto its own line",\n    async () => {},\n  );',
    ].join("\n");
    expect([...titlesOf(source)]).toEqual([
      "plain",
      "single 'quoted'",
      "backtick",
      "wrapped by the formatter onto its own line",
    ]);
  });
});
