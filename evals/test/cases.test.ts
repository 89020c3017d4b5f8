/**
 * The shipped cases, without a stack: every fixture validates, its recordings name real tools of
 * the catalog, its scripted investigation only calls what is recorded and the tools it expects,
 * and its scripted answer passes its own judge. Plus the CLI's argument checks.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "@tarsy/config";
import { afterAll, describe, expect, it } from "vitest";
import { CaseLoadError, loadCase, loadCases } from "../src/case.ts";
import { parseCliArgs, selectCases } from "../src/cli.ts";
import { compileScript, writeEvalConfig } from "../src/config.ts";
import type { HarnessError } from "../src/errors.ts";
import { createDeterministicJudge } from "../src/judge.ts";
import { findRecording } from "../src/replay-server.ts";
import { hasTool, loadServerCatalog } from "../src/servers.ts";
import { CASES_DIR, CATALOG_PATH } from "./support.ts";

const cases = loadCases(CASES_DIR);
const catalog = loadServerCatalog(CATALOG_PATH);

interface ScriptCall {
  name: string;
  arguments: Record<string, unknown>;
}

function scriptedCalls(script: unknown[] | undefined): ScriptCall[] {
  return (script ?? []).flatMap(
    (e) => ((e as { tool_calls?: ScriptCall[] }).tool_calls ?? []) as ScriptCall[],
  );
}

function scriptedFinal(script: unknown[] | undefined): string {
  const entries = (script ?? []) as { match?: unknown; text?: string; tool_calls?: unknown }[];
  return entries.findLast((e) => !e.match && e.text && !e.tool_calls)?.text ?? "";
}

describe("shipped cases", () => {
  it("are at least 20, each with findings, recordings and a scripted investigation", () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
    for (const c of cases) {
      expect(c.expected_findings.length, c.id).toBeGreaterThan(0);
      expect(c.recordings.length, c.id).toBeGreaterThan(0);
      expect(scriptedCalls(c.script).length, c.id).toBeGreaterThan(0);
    }
  });

  it("record only tools the replay server lists", () => {
    for (const c of cases) {
      for (const r of c.recordings) {
        expect(hasTool(catalog, r.server, r.tool), `${c.id}: ${r.server}.${r.tool}`).toBe(true);
      }
    }
  });

  it("script only calls that a recording answers, including every expected tool", () => {
    for (const c of cases) {
      const calls = scriptedCalls(c.script);
      for (const call of calls) {
        const [server = "", tool = ""] = call.name.split(".");
        expect(
          findRecording(c.recordings, server, tool, call.arguments),
          `${c.id}: ${call.name} ${JSON.stringify(call.arguments)}`,
        ).toBeDefined();
      }
      for (const expected of c.expected_tools) {
        expect(
          calls.map((x) => x.name),
          c.id,
        ).toContain(expected);
      }
    }
  });

  it("have scripted answers that state every expected finding and no forbidden one", async () => {
    const judge = createDeterministicJudge();
    for (const c of cases) {
      const verdict = await judge.judge({
        caseId: c.id,
        finalAnalysis: scriptedFinal(c.script),
        executiveSummary: "",
        expected: c.expected_findings,
        forbidden: c.forbidden_findings,
      });
      expect(
        verdict.expected.filter((v) => !v.present),
        c.id,
      ).toEqual([]);
      expect(
        verdict.forbidden.filter((v) => v.present),
        c.id,
      ).toEqual([]);
    }
  });

  it("route each case's answers by its own marker in one script", () => {
    const script = compileScript(cases) as { match?: { user?: string; agent?: string } }[];
    for (const c of cases) {
      const own = script.filter((e) => e.match?.user === `eval-case-${c.id}`);
      expect(own.length, c.id).toBe(scriptedCalls(c.script).length + 1);
    }
  });
});

describe("case validation", () => {
  const dir = mkdtempSync(join(tmpdir(), "eval-case-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("names the field of a bad case.yaml and the line of a bad recording", () => {
    writeFileSync(
      join(dir, "case.yaml"),
      "description: x\nalert_type: A\ndata: {}\nexpected_findings: []\n",
    );
    expect(() => loadCase(dir, "bad")).toThrow(/expected_findings/);
    writeFileSync(
      join(dir, "case.yaml"),
      "description: x\nalert_type: A\ndata: {}\nexpected_findings: [{finding: f, match: [x]}]\n",
    );
    writeFileSync(
      join(dir, "tools.jsonl"),
      '{"server":"s","tool":"t","result":"ok"}\n{"server":"s","tool":"t","result":"ok","error":"no"}\n',
    );
    const err = (() => {
      try {
        loadCase(dir, "bad");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CaseLoadError);
    expect(String((err as Error).message)).toMatch(
      /tools\.jsonl line 2: .*exactly one of result and error/,
    );
  });
});

describe("generated configuration", () => {
  it("refuses a chain override on an alert type another case uses", () => {
    const oom = cases.find((c) => c.id === "oom-crashloop");
    if (!oom) throw new Error("oom-crashloop is missing");
    const overriding = { ...oom, id: "own-chain", chain: { stages: [{ name: "s" }] } };
    const dir = mkdtempSync(join(tmpdir(), "eval-config-"));
    try {
      expect(() =>
        writeEvalConfig(
          dir,
          [oom, overriding],
          catalog,
          () => "http://127.0.0.1:1/mcp",
          {
            type: "scripted",
            model: "m",
          },
          { concurrency: 1, maxIterations: 2, sessionTimeout: "1m" },
        ),
      ).toThrow(
        expect.objectContaining({
          code: "chain_conflict",
          message: expect.stringContaining("own-chain"),
        }) as HarnessError,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("generated configuration for a real provider", () => {
  it("loads with TARSy's configuration loader: google, its model, and the key read from GOOGLE_API_KEY", () => {
    const dir = mkdtempSync(join(tmpdir(), "eval-config-"));
    try {
      writeEvalConfig(
        dir,
        cases,
        catalog,
        (server) => `http://127.0.0.1:1/mcp/${server}`,
        { type: "google", model: "gemini-2.5-pro" },
        { concurrency: 2, maxIterations: 5, sessionTimeout: "10m" },
      );
      const { config } = loadConfig({ configDir: dir, env: {} });
      expect(config.defaults.llm_provider).toBe("eval");
      expect(config.llmProviders.get("eval")).toMatchObject({
        type: "google",
        model: "gemini-2.5-pro",
        api_key_env: "GOOGLE_API_KEY",
      });
      // Every case's alert type reaches a chain, and every catalog server is configured.
      for (const c of cases) {
        expect(
          [...config.chains.values()].some((chain) => chain.alert_types.includes(c.alert_type)),
          c.alert_type,
        ).toBe(true);
      }
      expect([...config.mcpServers.keys()].sort()).toEqual(Object.keys(catalog.servers).sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("CLI arguments", () => {
  it("default to the offline deterministic run", () => {
    const args = parseCliArgs([]);
    expect(args.provider).toBe("scripted");
    expect(args["judge-provider"]).toBeUndefined();
    expect(args.iterations).toBe(1);
  });

  it("take a provider, model, judge, iterations and tags", () => {
    const args = parseCliArgs([
      "--provider",
      "google",
      "--model",
      "gemini-2.5-flash",
      "--judge-provider",
      "anthropic",
      "--iterations",
      "3",
      "--tags",
      "network, dns",
    ]);
    expect(args).toMatchObject({
      provider: "google",
      model: "gemini-2.5-flash",
      "judge-provider": "anthropic",
      iterations: 3,
      tags: ["network", "dns"],
    });
  });

  it("select the cases named and those with any of the tags", () => {
    const ids = (argv: string[]) => selectCases(cases, parseCliArgs(argv)).map((c) => c.id);
    expect(ids([])).toEqual(cases.map((c) => c.id));
    expect(ids(["--tags", "dns"])).toEqual(["dns-failure"]);
    expect(ids(["--cases", "oom-crashloop,pvc-pending"])).toEqual(["oom-crashloop", "pvc-pending"]);
    const network = ids(["--tags", "network"]);
    expect(network).toContain("dns-failure");
    expect(network).not.toContain("oom-crashloop");
    // Both given: the named cases that have one of the tags.
    expect(ids(["--cases", "oom-crashloop,dns-failure", "--tags", "dns"])).toEqual(["dns-failure"]);
    expect(ids(["--tags", "no-such-tag"])).toEqual([]);
  });

  it("reject an unknown provider, a bad iteration count and unknown options", () => {
    expect(() => parseCliArgs(["--provider", "gpt"])).toThrow(/--provider/);
    expect(() => parseCliArgs(["--iterations", "0"])).toThrow(/--iterations/);
    expect(() => parseCliArgs(["--bogus"])).toThrow(/bogus/);
  });
});
