/**
 * Every shipped case in deterministic mode on one real stack: the scripted investigations must all
 * PASS, with no fixture miss, every expected tool called, and the report saying so. A case added
 * without consistent recordings, script and findings fails here.
 */

import { randomBytes } from "node:crypto";
import { createTestDatabase, natsUrl, type TestDatabase } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCases } from "../src/case.ts";
import { DEFAULT_MODELS } from "../src/config.ts";
import { buildReport, renderMarkdown } from "../src/report.ts";
import { type CaseResult, type EvalSystem, runCases, startEvalSystem } from "../src/run.ts";
import { loadServerCatalog } from "../src/servers.ts";
import { CASES_DIR, CATALOG_PATH, ROOT } from "./support.ts";

const cases = loadCases(CASES_DIR);

describe("all shipped cases, deterministic mode", () => {
  let database: TestDatabase;
  let system: EvalSystem;
  let results: CaseResult[];
  let wallTimeMs = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    const id = randomBytes(3).toString("hex");
    const started = Date.now();
    system = await startEvalSystem({
      root: ROOT,
      cases,
      catalog: loadServerCatalog(CATALOG_PATH),
      provider: { type: "scripted", model: DEFAULT_MODELS.scripted },
      iterations: 1,
      concurrency: 6,
      databaseUrl: database.url,
      natsUrl: natsUrl(),
      prefix: `eva${id}`,
      streamSuffix: `_EVA${id.toUpperCase()}`,
      caseTimeoutMs: 60_000,
    });
    results = await runCases(system, cases, 1, 6);
    wallTimeMs = Date.now() - started;
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
    await database?.drop();
  });

  it("pass, each calling its expected tools, none missing a recording", () => {
    const notPassing = results
      .filter((r) => r.status !== "PASS" || r.expected_tools_missing.length > 0)
      .map((r) => ({
        case: r.case_id,
        status: r.status,
        reason: r.reason,
        missing: r.expected_tools_missing,
      }));
    expect(notPassing).toEqual([]);
    expect(results).toHaveLength(cases.length);
    expect(results.every((r) => r.fixture_misses.length === 0 && r.tool_calls.length > 0)).toBe(
      true,
    );
  });

  it("report 100% per tag", () => {
    const report = buildReport(results, {
      provider: "scripted",
      model: DEFAULT_MODELS.scripted,
      judge: system.judge.name,
      iterations: 1,
      wallTimeMs,
    });
    expect(report.pass_rate).toBe(1);
    expect(report.by_tag.filter((g) => g.pass_rate !== 1)).toEqual([]);
    expect(renderMarkdown(report)).toContain(`**${cases.length}/${cases.length} PASS (100.0%)**`);
  });
});
