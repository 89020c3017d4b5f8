/**
 * `pnpm eval` as a user runs it: the real command in a child process, deterministic (offline),
 * on the shared Postgres (a database of its own) and NATS (the CLI's own subject prefix), with
 * `--tags dns` selecting the DNS case only and a report directory of the test's own.
 */

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, natsUrl, type TestDatabase } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCases } from "../src/case.ts";
import type { Report } from "../src/report.ts";
import { CASES_DIR, ROOT } from "./support.ts";

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("pnpm", ["eval", ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("pnpm eval", () => {
  let database: TestDatabase;
  let reportDir: string;
  let result: { code: number | null; out: string };

  beforeAll(async () => {
    database = await createTestDatabase();
    reportDir = mkdtempSync(join(tmpdir(), "eval-cli-"));
    result = await run(["--tags", "dns", "--report-dir", reportDir], {
      DATABASE_URL: database.url,
      NATS_URL: natsUrl(),
    });
  }, 150_000);

  afterAll(async () => {
    await database?.drop();
    if (reportDir) rmSync(reportDir, { recursive: true, force: true });
  });

  it("runs the DNS-tagged cases only, passes them, exits 0 and writes the JSON and markdown report", () => {
    expect(result.code, result.out).toBe(0);
    const dns = loadCases(CASES_DIR)
      .filter((c) => c.tags.includes("dns"))
      .map((c) => c.id);
    expect(dns.length).toBeGreaterThan(0);
    expect(result.out).toContain(`${dns.length} case(s) × 1 on scripted/scripted-eval`);
    expect(result.out).toContain(`${dns.length}/${dns.length} PASS`);

    const files = readdirSync(reportDir);
    const json = files.find((f) => f.endsWith(".json"));
    const md = files.find((f) => f.endsWith(".md"));
    expect(json, files.join(", ")).toBeDefined();
    expect(md, files.join(", ")).toBeDefined();
    const report = JSON.parse(readFileSync(join(reportDir, json ?? ""), "utf8")) as Report;
    expect(report.results.map((r) => r.case_id).sort()).toEqual(dns.sort());
    expect(report).toMatchObject({ provider: "scripted", judge: "deterministic", pass_rate: 1 });
    expect(report.results.every((r) => r.tags.includes("dns"))).toBe(true);
    const markdown = readFileSync(join(reportDir, md ?? ""), "utf8");
    expect(markdown).toContain("# TARSy evaluation: scripted/scripted-eval");
    expect(markdown).toMatch(/\| dns-failure \| 1 \| PASS \|/);
  });
});
