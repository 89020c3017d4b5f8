/**
 * The harness on the real system: one stack (every service a process, llm-service's scripted
 * backend the only fake), a handful of shipped cases plus two test fixtures — one answered
 * wrongly on purpose, one asking for a tool result nobody recorded. What a user of `pnpm eval`
 * sees: each case's status, the tool calls and the verdicts, the report files; and through the
 * trace API, that the recorded tool results are what the LLM was sent. A second run wires an LLM
 * judge (`judgeProvider`, scripted) and takes a case with a runbook file and one whose session
 * fails.
 */

import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLlmClient } from "@tarsy/llm-client";
import { createTestDatabase, natsUrl, type TestDatabase } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvalCase, loadCases } from "../src/case.ts";
import { DEFAULT_MODELS } from "../src/config.ts";
import { createLlmJudge } from "../src/judge.ts";
import { buildReport, type Report, renderMarkdown, writeReport } from "../src/report.ts";
import {
  type CaseResult,
  type EvalSystem,
  llmAddressOf,
  runCases,
  startEvalSystem,
} from "../src/run.ts";
import { loadServerCatalog } from "../src/servers.ts";
import { CASES_DIR, CATALOG_PATH, FIXTURE_CASES_DIR, ROOT, WIRING_CASES_DIR } from "./support.ts";

const SHIPPED = ["oom-crashloop", "dns-failure", "networkpolicy-blocking"];
const cases: EvalCase[] = [
  ...loadCases(CASES_DIR).filter((c) => SHIPPED.includes(c.id)),
  ...loadCases(FIXTURE_CASES_DIR),
];

describe("evaluation harness (deterministic mode, real stack)", () => {
  let database: TestDatabase;
  let system: EvalSystem;
  let results: CaseResult[];
  const logs: string[] = [];
  const reportDir = mkdtempSync(join(tmpdir(), "eval-report-"));
  const byId = (id: string) => {
    const r = results.find((x) => x.case_id === id);
    if (!r) throw new Error(`no result for ${id}`);
    return r;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const id = randomBytes(3).toString("hex");
    system = await startEvalSystem({
      root: ROOT,
      cases,
      catalog: loadServerCatalog(CATALOG_PATH),
      provider: { type: "scripted", model: DEFAULT_MODELS.scripted },
      iterations: 1,
      concurrency: 5,
      databaseUrl: database.url,
      natsUrl: natsUrl(),
      prefix: `evt${id}`,
      streamSuffix: `_EVT${id.toUpperCase()}`,
      caseTimeoutMs: 60_000,
      log: (line) => logs.push(line),
    });
    results = await runCases(system, cases, 1, 5);
  }, 150_000);

  afterAll(async () => {
    await system?.stop();
    await database?.drop();
    rmSync(reportDir, { recursive: true, force: true });
  });

  it("passes the shipped cases, with the tools they expect, served from their recordings", () => {
    for (const id of SHIPPED) {
      const r = byId(id);
      expect({ id, status: r.status, reason: r.reason }).toEqual({
        id,
        status: "PASS",
        reason: null,
      });
      expect(r.expected_tools_missing).toEqual([]);
      expect(r.tool_calls.every((t) => t.error === null)).toBe(true);
      expect(r.total_tokens).toBeGreaterThan(0);
      expect(r.duration_ms).toBeGreaterThan(0);
    }
    expect(byId("dns-failure").tool_calls.map((t) => `${t.server}.${t.tool}`)).toEqual([
      "kubernetes-server.pods_list_in_namespace",
      "kubernetes-server.pods_log",
      "kubernetes-server.pods_list_in_namespace",
      "kubernetes-server.pods_log",
    ]);
    expect(byId("oom-crashloop").executive_summary).toMatch(/^payments-api is crash looping/);
  });

  it("sends the recorded tool result to the LLM (trace API)", async () => {
    const sessionId = byId("oom-crashloop").session_id ?? "";
    const trace = await system.api.trace(sessionId);
    const exec = trace.stages
      .flatMap((s) => s.executions)
      .find((e) => e.agent_name === "EvalInvestigator");
    const last = exec?.llm_interactions.at(-1);
    expect(last).toBeDefined();
    const detail = (await system.api.llmInteraction(sessionId, last?.id ?? "")) as {
      conversation: { role: string; content: string; tool_name: string | null }[];
    };
    const toolMessages = detail.conversation.filter((m) => m.role === "tool");
    const podsGet = toolMessages.find((m) => m.tool_name?.endsWith("pods_get"));
    const podsLog = toolMessages.find((m) => m.tool_name?.endsWith("pods_log"));
    // Exactly the text of tools.jsonl's recordings.
    expect(podsGet?.content).toContain("reason: OOMKilled");
    expect(podsGet?.content).toContain("memory: 256Mi");
    expect(podsLog?.content).toContain("GC overhead: 94% of time in GC");
    // The alert reached the first user message, with the routing marker of deterministic mode.
    const user = detail.conversation.find((m) => m.role === "user")?.content ?? "";
    expect(user).toContain("payments-api-6d8f7c9b4-k2x7p");
    expect(user).toContain("eval-case-oom-crashloop");
  });

  it("fails a wrong answer: the judge finds the expected findings missing and the forbidden claim made", () => {
    const r = byId("wrong-answer");
    expect(r.status).toBe("FAIL");
    expect(r.session_status).toBe("completed");
    expect(r.judgement?.judge).toBe("deterministic");
    expect(r.judgement?.expected.map((v) => v.present)).toEqual([false, false, false]);
    expect(r.judgement?.forbidden).toEqual([
      {
        finding: "The image cannot be pulled.",
        present: true,
        evidence: expect.stringContaining("cannot be pulled (ImagePullBackOff)"),
      },
    ]);
    expect(r.reason).toContain("missing: The container is OOMKilled (exit code 137).");
    expect(r.reason).toContain("forbidden claim: The image cannot be pulled.");
  });

  it("marks a run that asked for an unrecorded tool result FIXTURE_MISS", () => {
    const r = byId("fixture-miss");
    expect(r.status).toBe("FIXTURE_MISS");
    expect(r.fixture_misses).toEqual([
      {
        server: "kubernetes-server",
        tool: "pods_log",
        arguments: { name: "payments-api-6d8f7c9b4-r9wq2", namespace: "payments" },
        reason: "no_recording",
      },
    ]);
    // TARSy saw the MCP error as a failed tool call; the recorded call after it was served.
    const [missed, served] = r.tool_calls;
    expect(missed?.error).toMatch(/fixture miss/);
    expect(served).toMatchObject({ tool: "pods_get", error: null });
  });

  it("gives expected verdicts with the sentence that proves them", () => {
    const verdicts = byId("oom-crashloop").judgement?.expected ?? [];
    expect(verdicts).toHaveLength(3);
    expect(verdicts.every((v) => v.present)).toBe(true);
    expect(verdicts[0]?.evidence).toContain("OOMKilled (exit code 137, 12 restarts)");
  });

  it("writes the report as JSON and markdown", () => {
    const report = buildReport(results, {
      provider: "scripted",
      model: DEFAULT_MODELS.scripted,
      judge: system.judge.name,
      iterations: 1,
      wallTimeMs: 1234,
    });
    const paths = writeReport(reportDir, "run", report);
    const json = JSON.parse(readFileSync(paths.json, "utf8")) as Report;
    expect(json).toMatchObject({
      cases: 5,
      runs: 5,
      passed: 3,
      pass_rate: 0.6,
      by_status: { PASS: 3, FAIL: 1, FIXTURE_MISS: 1, ERROR: 0 },
      judge: "deterministic",
      // The scripted model has no rate: every run's cost is marked as not fully priced.
      runs_not_fully_priced: 5,
    });
    expect(json.by_provider).toEqual([
      expect.objectContaining({ key: "scripted/scripted-eval", runs: 5, passed: 3 }),
    ]);
    // Every fixture carries the oom case's tags: 3 runs, one of which passed.
    expect(json.by_tag.find((g) => g.key === "memory")).toMatchObject({ runs: 3, passed: 1 });
    expect(json.by_tag.find((g) => g.key === "dns")).toMatchObject({ runs: 1, passed: 1 });
    expect(json.duration_ms.p50).toBeGreaterThan(0);
    expect(json.duration_ms.p95).toBeGreaterThanOrEqual(json.duration_ms.p50 ?? 0);
    expect(json.results.map((r) => r.case_id).sort()).toEqual(cases.map((c) => c.id).sort());

    const md = readFileSync(paths.markdown, "utf8");
    expect(md).toContain("**3/5 PASS (60.0%)** · FAIL 1 · FIXTURE_MISS 1 · ERROR 0");
    expect(md).toMatch(/\| wrong-answer \| 1 \| FAIL \|/);
    expect(md).toMatch(
      /\| fixture-miss \| 1 \| FIXTURE_MISS \|.*no recording for kubernetes-server\.pods_log/,
    );
    expect(md).toContain("- forbidden ❌ claimed The image cannot be pulled.");
    expect(md).toMatch(/\| dns \| 1 \| 1 \| 100\.0% \|/);
    expect(md).toContain("cost $0.0000 (5 run(s) with unpriced LLM calls)");
  });

  it("calls an LLM judge through llm-service and reads its verdicts", async () => {
    // The judge's own request through the stack's llm-service (scripted backend, inline script).
    const client = createLlmClient({ address: llmAddressOf(system.stack) });
    try {
      const judge = createLlmJudge(client, {
        provider: "scripted",
        backend: "scripted",
        model: "judge",
        script: JSON.stringify([
          {
            match: {
              system: "You grade an SRE investigation",
              user: "EXPECTED claims\n1. The container is OOMKilled",
            },
            text: '```json\n{"expected":[{"finding":"x","present":true,"evidence":"OOMKilled (exit code 137)"}],"forbidden":[{"finding":"y","present":false,"evidence":""}]}\n```',
          },
        ]),
      });
      const oom = cases.find((c) => c.id === "oom-crashloop");
      const verdict = await judge.judge({
        caseId: "oom-crashloop",
        finalAnalysis: byId("oom-crashloop").final_analysis ?? "",
        executiveSummary: "",
        expected: oom?.expected_findings.slice(0, 1) ?? [],
        forbidden: oom?.forbidden_findings ?? [],
      });
      expect(verdict).toEqual({
        judge: "llm:scripted/judge",
        expected: [
          {
            finding: "The container is OOMKilled (exit code 137).",
            present: true,
            evidence: "OOMKilled (exit code 137)",
          },
        ],
        forbidden: [{ finding: "The image cannot be pulled.", present: false, evidence: "" }],
      });
    } finally {
      client.close();
    }
  });
});

describe("evaluation harness with an LLM judge, a runbook file and a failing session (real stack)", () => {
  const wiring = loadCases(WIRING_CASES_DIR);
  let database: TestDatabase;
  let system: EvalSystem;
  let results: CaseResult[];
  const byId = (id: string) => {
    const r = results.find((x) => x.case_id === id);
    if (!r) throw new Error(`no result for ${id}`);
    return r;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const id = randomBytes(3).toString("hex");
    system = await startEvalSystem({
      root: ROOT,
      cases: wiring,
      catalog: loadServerCatalog(CATALOG_PATH),
      provider: { type: "scripted", model: DEFAULT_MODELS.scripted },
      judgeProvider: { type: "scripted", model: "scripted-judge" },
      iterations: 1,
      concurrency: 2,
      databaseUrl: database.url,
      natsUrl: natsUrl(),
      prefix: `evw${id}`,
      streamSuffix: `_EVW${id.toUpperCase()}`,
      caseTimeoutMs: 60_000,
    });
    results = await runCases(system, wiring, 1, 2);
  }, 150_000);

  afterAll(async () => {
    await system?.stop();
    await database?.drop();
  });

  it("judges with the configured LLM judge through llm-service: its name and its verdicts", () => {
    expect(system.judge.name).toBe("llm:scripted/scripted-judge");
    const r = byId("llm-judged");
    expect({ status: r.status, reason: r.reason }).toEqual({ status: "PASS", reason: null });
    expect(r.judgement?.judge).toBe("llm:scripted/scripted-judge");
    // The scripted judge's own words, not the deterministic judge's sentence.
    expect(r.judgement?.expected).toEqual([
      {
        finding: "The container is OOMKilled (exit code 137).",
        present: true,
        evidence: "JUDGE-SAW: OOMKilled (exit code 137)",
      },
    ]);
  });

  it("serves a case's runbook file to TARSy, and the investigating agent is sent it", async () => {
    const sessionId = byId("llm-judged").session_id ?? "";
    const trace = await system.api.trace(sessionId);
    const first = trace.stages
      .flatMap((s) => s.executions)
      .find((e) => e.agent_name === "EvalInvestigator")?.llm_interactions[0];
    expect(first).toBeDefined();
    const detail = (await system.api.llmInteraction(sessionId, first?.id ?? "")) as {
      conversation: { content: string }[];
    };
    const sent = detail.conversation.map((m) => m.content).join("\n");
    expect(sent).toContain("# RUNBOOK-LLM-JUDGED: a crash-looping payments pod");
    expect(sent).toContain("`OOMKilled` with exit code 137 means the memory limit is hit.");
  });

  it("marks a run whose session failed ERROR, in its result and in the report", () => {
    const r = byId("session-fails");
    expect(r.status).toBe("ERROR");
    expect(r.session_status).toBe("failed");
    expect(r.reason).toMatch(/^session failed: /);
    expect(r.judgement).toBeNull();
    const report = buildReport(results, {
      provider: "scripted",
      model: DEFAULT_MODELS.scripted,
      judge: system.judge.name,
      iterations: 1,
      wallTimeMs: 1,
    });
    expect(report.by_status).toEqual({ PASS: 1, FAIL: 0, FIXTURE_MISS: 0, ERROR: 1 });
    expect(report.judge).toBe("llm:scripted/scripted-judge");
    const md = renderMarkdown(report);
    expect(md).toContain("**1/2 PASS (50.0%)** · FAIL 0 · FIXTURE_MISS 0 · ERROR 1");
    expect(md).toMatch(/\| session-fails \| 1 \| ERROR \|.*session failed: /);
  });
});
