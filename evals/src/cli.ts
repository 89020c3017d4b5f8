/**
 * `pnpm eval`: runs the evaluation cases against a provider and writes the report.
 *
 *   pnpm eval                                   # deterministic: scripted answers, substring judge
 *   pnpm eval --provider google --model gemini-2.5-pro --judge-provider google --iterations 3
 */

import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { z } from "zod";
import { type EvalCase, loadCases } from "./case.ts";
import {
  DEFAULT_KEY_ENVS,
  DEFAULT_MODELS,
  type ProviderChoice,
  ProviderTypeSchema,
} from "./config.ts";
import { buildReport, writeReport } from "./report.ts";
import { runCases, startEvalSystem } from "./run.ts";
import { loadServerCatalog } from "./servers.ts";

const EVALS_DIR = resolve(fileURLToPath(new URL("..", import.meta.url)));
const ROOT = resolve(EVALS_DIR, "..");

const list = z
  .string()
  .optional()
  .transform((s) =>
    s
      ? s
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean)
      : [],
  );

export const CliArgsSchema = z
  .strictObject({
    provider: ProviderTypeSchema.default("scripted"),
    model: z.string().min(1).optional(),
    "api-key-env": z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/)
      .optional(),
    "base-url": z.url().optional(),
    "judge-provider": ProviderTypeSchema.optional(),
    "judge-model": z.string().min(1).optional(),
    "judge-api-key-env": z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/)
      .optional(),
    iterations: z.coerce.number().int().min(1).max(100).default(1),
    concurrency: z.coerce.number().int().min(1).max(32).default(4),
    "max-iterations": z.coerce.number().int().min(1).max(50).default(10),
    tags: list,
    cases: list,
    "cases-dir": z.string().default(resolve(EVALS_DIR, "cases")),
    "report-dir": z.string().default(resolve(EVALS_DIR, "reports")),
    "min-pass-rate": z.coerce.number().min(0).max(1).default(1),
    help: z.boolean().default(false),
  })
  .refine((a) => a["judge-provider"] !== "scripted", {
    message:
      "--judge-provider scripted has nothing to judge with: leave it out for the deterministic judge",
    path: ["judge-provider"],
  });
export type CliArgs = z.infer<typeof CliArgsSchema>;

const EnvSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  NATS_URL: z.string().min(1).optional(),
});

const USAGE = `pnpm eval [options]
  --provider P          scripted (default, offline) | google | openai | anthropic | xai | vertexai | openai-compatible
  --model M             the model (default per provider)
  --api-key-env VAR     the variable holding the key (default per provider, e.g. GOOGLE_API_KEY)
  --base-url URL        openai-compatible endpoints
  --judge-provider P    grade with an LLM (default: the deterministic substring/regex judge)
  --judge-model M, --judge-api-key-env VAR
  --iterations N        runs of each case (default 1)
  --concurrency N       sessions at once (default 4)
  --tags a,b            only cases with any of these tags
  --cases id,id         only these cases
  --min-pass-rate X     exit 1 below this pass rate (default 1)
Environment: DATABASE_URL (else an embedded Postgres), NATS_URL (else local NATS or one started).`;

const OPTIONS = {
  provider: { type: "string" },
  model: { type: "string" },
  "api-key-env": { type: "string" },
  "base-url": { type: "string" },
  "judge-provider": { type: "string" },
  "judge-model": { type: "string" },
  "judge-api-key-env": { type: "string" },
  iterations: { type: "string" },
  concurrency: { type: "string" },
  "max-iterations": { type: "string" },
  tags: { type: "string" },
  cases: { type: "string" },
  "cases-dir": { type: "string" },
  "report-dir": { type: "string" },
  "min-pass-rate": { type: "string" },
  help: { type: "boolean" },
} as const;

export function parseCliArgs(argv: readonly string[]): CliArgs {
  const { values } = parseArgs({
    args: [...argv].filter((a) => a !== "--"),
    options: OPTIONS,
    strict: true,
  });
  const parsed = CliArgsSchema.safeParse(values);
  if (!parsed.success) {
    throw new Error(
      parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("\n"),
    );
  }
  return parsed.data;
}

/** The cases `--cases` names (all when none), with any of the `--tags` (all when none). */
export function selectCases(
  cases: readonly EvalCase[],
  args: Pick<CliArgs, "cases" | "tags">,
): EvalCase[] {
  return cases.filter(
    (c) =>
      (args.cases.length === 0 || args.cases.includes(c.id)) &&
      (args.tags.length === 0 || c.tags.some((t) => args.tags.includes(t))),
  );
}

async function main(): Promise<number> {
  let args: CliArgs;
  try {
    args = parseCliArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const env = EnvSchema.parse(process.env);
  const catalog = loadServerCatalog(resolve(EVALS_DIR, "servers.json"));
  const cases = selectCases(loadCases(resolve(args["cases-dir"])), args);
  if (cases.length === 0) {
    console.error("no case selected");
    return 2;
  }
  const provider: ProviderChoice = {
    type: args.provider,
    model: args.model ?? DEFAULT_MODELS[args.provider],
    apiKeyEnv: args["api-key-env"],
    baseUrl: args["base-url"],
  };
  if (provider.type === "scripted") {
    const unscripted = cases.filter((c) => !c.script).map((c) => c.id);
    if (unscripted.length > 0) {
      console.error(`no llm-script.yaml for the deterministic run: ${unscripted.join(", ")}`);
      return 2;
    }
  }
  const judgeType = args["judge-provider"];
  const judgeProvider: ProviderChoice | undefined = judgeType && {
    type: judgeType,
    model: args["judge-model"] ?? DEFAULT_MODELS[judgeType],
    apiKeyEnv: args["judge-api-key-env"],
  };

  // A missing key would fail every case at its first LLM call: say so before booting anything.
  for (const p of [provider, judgeProvider]) {
    const keyEnv = p && (p.apiKeyEnv ?? DEFAULT_KEY_ENVS[p.type]);
    if (keyEnv && !process.env[keyEnv]) {
      console.error(
        `${keyEnv} is not set: export the ${p.type} API key (or name its variable with --api-key-env)`,
      );
      return 2;
    }
  }

  const name = `eval-${new Date().toISOString().replace(/[:.]/g, "-")}-${provider.type}`;
  const reportDir = resolve(args["report-dir"]);
  const logPath = resolve(reportDir, `${name}.log`);
  mkdirSync(reportDir, { recursive: true });
  const logFile = createWriteStream(logPath);
  console.log(
    `${cases.length} case(s) × ${args.iterations} on ${provider.type}/${provider.model}; services log to ${logPath}`,
  );

  // Subjects and streams of this run's own, so a run never meets a TARSy already on that NATS.
  const runId = randomBytes(3).toString("hex");
  const started = Date.now();
  const system = await startEvalSystem({
    root: ROOT,
    cases,
    catalog,
    provider,
    judgeProvider,
    iterations: args.iterations,
    concurrency: args.concurrency,
    maxIterations: args["max-iterations"],
    databaseUrl: env.DATABASE_URL,
    natsUrl: env.NATS_URL,
    prefix: `eval${runId}`,
    streamSuffix: `_EVAL${runId.toUpperCase()}`,
    log: (line) => logFile.write(`${line}\n`),
  });
  let results: Awaited<ReturnType<typeof runCases>>;
  try {
    results = await runCases(system, cases, args.iterations, args.concurrency);
  } finally {
    await system.stop();
    logFile.end();
  }
  for (const r of results) {
    console.log(`${r.status.padEnd(12)} ${r.case_id}${r.reason ? `  ${r.reason}` : ""}`);
  }
  const report = buildReport(results, {
    provider: provider.type,
    model: provider.model,
    judge: system.judge.name,
    iterations: args.iterations,
    wallTimeMs: Date.now() - started,
  });
  const paths = writeReport(reportDir, name, report);
  console.log(
    `${report.passed}/${report.runs} PASS in ${(report.wall_time_ms / 1000).toFixed(1)} s; report: ${paths.markdown}`,
  );
  return report.pass_rate >= args["min-pass-rate"] ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
