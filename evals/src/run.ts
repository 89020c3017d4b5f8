/**
 * One evaluation run: boots TARSy (`startStack`) with a generated configuration whose MCP servers
 * are the replay server, submits every case through the HTTP API (the session registered to its
 * case right after submit), waits for each to end, collects what it produced and what it cost,
 * and has the judge grade it.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { createLlmClient, type LlmClient } from "@tarsy/llm-client";
import { type Stack, startStack } from "@tarsy/stack";
import { createTarsyApi, type TarsyApi } from "./api.ts";
import type { EvalCase } from "./case.ts";
import { caseMarker, MARKER_FIELD, type ProviderChoice, writeEvalConfig } from "./config.ts";
import { HarnessError } from "./errors.ts";
import { createDeterministicJudge, createLlmJudge, type Judge, type Judgement } from "./judge.ts";
import { startReplayServer, type ToolMiss } from "./replay-server.ts";
import type { ServerCatalog } from "./servers.ts";

export const CASE_STATUSES = ["PASS", "FAIL", "FIXTURE_MISS", "ERROR"] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];

export interface ToolCallRecord {
  server: string;
  tool: string;
  arguments: unknown;
  error: string | null;
}

export interface CaseResult {
  case_id: string;
  tags: string[];
  provider: string;
  model: string;
  iteration: number;
  status: CaseStatus;
  /** Why it is not PASS, in a line. */
  reason: string | null;
  session_id: string | null;
  session_status: string | null;
  final_analysis: string | null;
  executive_summary: string | null;
  tool_calls: ToolCallRecord[];
  expected_tools_missing: string[];
  fixture_misses: ToolMiss[];
  judgement: Judgement | null;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
  /** complete: every LLM call priced; partial / none: some / no call had a known rate. */
  cost_completeness: "complete" | "partial" | "none";
  duration_ms: number | null;
}

export interface RunOptions {
  root: string;
  cases: readonly EvalCase[];
  catalog: ServerCatalog;
  provider: ProviderChoice;
  /** None: the deterministic judge. */
  judgeProvider?: ProviderChoice | undefined;
  iterations: number;
  concurrency: number;
  maxIterations?: number;
  /** Unset: startStack's default (embedded Postgres). */
  databaseUrl?: string | undefined;
  natsUrl?: string | undefined;
  prefix?: string | undefined;
  streamSuffix?: string | undefined;
  /** How long one session may take before the case is an ERROR. */
  caseTimeoutMs?: number;
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface EvalRun {
  stack: Stack;
  api: TarsyApi;
  results: CaseResult[];
}

/** A started system ready to take cases: the harness's parts, exposed for tests. */
export interface EvalSystem {
  stack: Stack;
  api: TarsyApi;
  judge: Judge;
  runCase(evalCase: EvalCase, iteration: number): Promise<CaseResult>;
  stop(): Promise<void>;
}

/** The gRPC address of the stack's llm-service, from the line it logs when it listens. */
export function llmAddressOf(stack: Stack): string {
  for (const line of stack.process("llm-service-1").lines) {
    try {
      const record = JSON.parse(line) as { msg?: string; port?: number };
      if (record.msg === "llm-service listening" && record.port) return `127.0.0.1:${record.port}`;
    } catch {
      // not a pino line
    }
  }
  throw new HarnessError("llm_address_unknown", "llm-service's port was not found in its log");
}

function isTerminal(status: string): boolean {
  return (TERMINAL_SESSION_STATUSES as readonly string[]).includes(status);
}

export async function startEvalSystem(options: RunOptions): Promise<EvalSystem> {
  const log = options.log ?? (() => {});
  const sessionCase = new Map<string, string>();
  const ended = new Set<string>();
  const caseById = new Map(options.cases.map((c) => [c.id, c]));
  const dir = mkdtempSync(join(tmpdir(), "tarsy-eval-"));
  let api: TarsyApi | undefined;

  const replay = await startReplayServer({
    catalog: options.catalog,
    runbookOf: (caseId) => caseById.get(caseId)?.runbookText,
    recordingsOf: (sessionId) => caseById.get(sessionCase.get(sessionId) ?? "")?.recordings,
    // An execution belongs to the registered, unfinished session whose stages list it.
    async resolveSession(executionId) {
      if (!api) return undefined;
      for (const sessionId of sessionCase.keys()) {
        if (ended.has(sessionId)) continue;
        const detail = await api.session(sessionId).catch(() => undefined);
        if (detail?.stages.some((s) => s.executions.some((e) => e.id === executionId))) {
          return sessionId;
        }
      }
      return undefined;
    },
  });

  let stack: Stack;
  try {
    const config = writeEvalConfig(
      dir,
      options.cases,
      options.catalog,
      replay.urlOf,
      options.provider,
      {
        concurrency: options.concurrency,
        maxIterations: options.maxIterations ?? 10,
        sessionTimeout: "10m",
      },
    );
    stack = await startStack({
      root: options.root,
      configDir: config.dir,
      ...(config.scriptPath && { llmScriptPath: config.scriptPath }),
      ...(options.databaseUrl && { databaseUrl: options.databaseUrl }),
      ...(options.natsUrl && { natsUrl: options.natsUrl }),
      ...(options.prefix && { prefix: options.prefix }),
      ...(options.streamSuffix && { streamSuffix: options.streamSuffix }),
      replicas: { "agent-runner": 1 },
      logLevel: "info",
      log,
      env: { TARSY_REPO_ROOT: options.root, ...options.env },
    });
  } catch (err) {
    await replay.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const tarsy = createTarsyApi(stack.apiUrl);
  api = tarsy;

  let llm: LlmClient | undefined;
  let judge: Judge;
  if (options.judgeProvider) {
    llm = createLlmClient({ address: llmAddressOf(stack) });
    const j = options.judgeProvider;
    judge = createLlmJudge(llm, {
      provider: j.type,
      model: j.model,
      ...(j.apiKeyEnv && { apiKeyEnv: j.apiKeyEnv }),
      ...(j.baseUrl && { baseUrl: j.baseUrl }),
      ...(j.type === "scripted" && { backend: "scripted" }),
      temperature: 0,
    });
  } else {
    judge = createDeterministicJudge();
  }

  const collectTools = async (sessionId: string): Promise<ToolCallRecord[]> => {
    const trace = await tarsy.trace(sessionId);
    const calls: ToolCallRecord[] = [];
    for (const stage of trace.stages) {
      for (const exec of stage.executions) {
        for (const m of exec.mcp_interactions) {
          if (!m.tool_name) continue;
          const detail = await tarsy.mcpInteraction(sessionId, m.id);
          calls.push({
            server: m.server_name,
            tool: m.tool_name,
            arguments: detail.tool_arguments,
            error: m.error_message,
          });
        }
      }
    }
    return calls;
  };

  const runCase = async (c: EvalCase, iteration: number): Promise<CaseResult> => {
    const result: CaseResult = {
      case_id: c.id,
      tags: c.tags,
      provider: options.provider.type,
      model: options.provider.model,
      iteration,
      status: "ERROR",
      reason: null,
      session_id: null,
      session_status: null,
      final_analysis: null,
      executive_summary: null,
      tool_calls: [],
      expected_tools_missing: [],
      fixture_misses: [],
      judgement: null,
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      cost_usd: 0,
      cost_completeness: "none",
      duration_ms: null,
    };
    try {
      const data =
        options.provider.type === "scripted"
          ? { ...c.data, [MARKER_FIELD]: caseMarker(c.id) }
          : c.data;
      const sessionId = await tarsy.submitAlert({
        alert_type: c.alert_type,
        data,
        ...(c.runbookText !== undefined
          ? { runbook: replay.runbookUrlOf(c.id) }
          : c.runbook && { runbook: c.runbook }),
      });
      sessionCase.set(sessionId, c.id);
      result.session_id = sessionId;
      const deadline = Date.now() + (options.caseTimeoutMs ?? 11 * 60_000);
      let detail = await tarsy.session(sessionId);
      while (!isTerminal(detail.status)) {
        if (Date.now() > deadline)
          throw new HarnessError("session_timeout", `session ${sessionId} did not end in time`);
        await new Promise((r) => setTimeout(r, 250));
        detail = await tarsy.session(sessionId);
      }
      ended.add(sessionId);
      result.session_status = detail.status;
      result.final_analysis = detail.final_analysis;
      result.executive_summary = detail.executive_summary;
      result.input_tokens = detail.token_usage.input_tokens;
      result.output_tokens = detail.token_usage.output_tokens;
      result.total_tokens = detail.total_tokens;
      result.cost_usd = detail.cost.estimated_cost_usd;
      result.cost_completeness = detail.cost.cost_completeness;
      result.duration_ms = detail.duration_ms;
      result.tool_calls = await collectTools(sessionId);
      const called = new Set(result.tool_calls.map((t) => `${t.server}.${t.tool}`));
      result.expected_tools_missing = c.expected_tools.filter((t) => !called.has(t));
      result.fixture_misses = replay.misses(sessionId);

      if (detail.status !== "completed" || !detail.final_analysis) {
        result.reason = `session ${detail.status}: ${detail.error_message ?? "no final analysis"}`;
        if (result.fixture_misses.length > 0) result.status = "FIXTURE_MISS";
        return result;
      }
      result.judgement = await judge.judge({
        caseId: c.id,
        finalAnalysis: detail.final_analysis,
        executiveSummary: detail.executive_summary ?? "",
        expected: c.expected_findings,
        forbidden: c.forbidden_findings,
      });
      const missing = result.judgement.expected.filter((v) => !v.present).map((v) => v.finding);
      const claimed = result.judgement.forbidden.filter((v) => v.present).map((v) => v.finding);
      if (result.fixture_misses.length > 0) {
        result.status = "FIXTURE_MISS";
        result.reason = `no recording for ${result.fixture_misses
          .map((m) => `${m.server}.${m.tool} ${JSON.stringify(m.arguments)}`)
          .join(", ")}`;
      } else if (missing.length > 0 || claimed.length > 0) {
        result.status = "FAIL";
        result.reason = [
          ...missing.map((f) => `missing: ${f}`),
          ...claimed.map((f) => `forbidden claim: ${f}`),
        ].join("; ");
      } else {
        result.status = "PASS";
      }
    } catch (err) {
      result.status = "ERROR";
      result.reason = err instanceof Error ? err.message : String(err);
    }
    return result;
  };

  return {
    stack,
    api: tarsy,
    judge,
    runCase,
    async stop() {
      llm?.close();
      await stack.stop();
      await replay.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every case `iterations` times, at most `concurrency` sessions at once. */
export async function runCases(
  system: EvalSystem,
  cases: readonly EvalCase[],
  iterations: number,
  concurrency: number,
): Promise<CaseResult[]> {
  const jobs = cases.flatMap((c) =>
    Array.from({ length: iterations }, (_, i) => ({ c, iteration: i + 1 })),
  );
  const results: CaseResult[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const index = next++;
      const job = jobs[index];
      if (!job) return;
      results[index] = await system.runCase(job.c, job.iteration);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  return results;
}
