import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Stack, type StackOptions, serviceBundle, startStack } from "@tarsy/stack";
import { createTestDatabase, natsUrl, type TestDatabase } from "@tarsy/testkit";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";

export const ROOT = resolve(import.meta.dirname, "../../..");
export const BIN = resolve(import.meta.dirname, "../bin/tarsy.mjs");
/**
 * The CLI the tests run: its sources as one ES module (built once, rebuilt when a source
 * changes), which node starts in a fraction of the time `bin/tarsy.mjs` takes to load them
 * through tsx. config-check.test.ts runs `bin/tarsy.mjs` itself.
 */
let cliMain: Promise<string> | undefined;

export interface System {
  stack: Stack;
  database: TestDatabase;
  logs: string[];
  /** The environment a user of this system would set for the CLI. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface BootOptions {
  /** A config dir instead of deploy/demo (its llm-providers.yaml too); the demo's LLM script still runs. */
  configDir?: string;
  replicas?: StackOptions["replicas"];
  /** LLM script entries (YAML list) answered before the demo's: they win where they match. */
  extraLlmScript?: string;
}

const DEMO_SCRIPT = resolve(ROOT, "deploy/demo/llm-script.yaml");

/** The demo's LLM script with `extra` entries first, in a file of its own. */
function scriptWithDemo(extra: string): string {
  const demo = parseYaml(readFileSync(DEMO_SCRIPT, "utf8")) as { responses: unknown[] };
  const entries = parseYaml(extra) as unknown[];
  const file = join(mkdtempSync(join(tmpdir(), "tarsy-cli-script-")), "llm-script.yaml");
  writeFileSync(file, stringifyYaml({ responses: [...entries, ...demo.responses] }));
  return file;
}

/** The whole system as processes (demo config, scripted LLM) on a database and NATS prefix of its own. */
export async function bootSystem(options: BootOptions = {}): Promise<System> {
  const database = await createTestDatabase();
  const id = randomBytes(4).toString("hex");
  const logs: string[] = [];
  const stack = await startStack({
    root: ROOT,
    configDir: options.configDir ?? resolve(ROOT, "deploy/demo"),
    ...(options.replicas && { replicas: options.replicas }),
    llmScriptPath: options.extraLlmScript ? scriptWithDemo(options.extraLlmScript) : DEMO_SCRIPT,
    databaseUrl: database.url,
    natsUrl: natsUrl(),
    prefix: `cli${id}`,
    streamSuffix: `_CLI${id.toUpperCase()}`,
    logLevel: "info",
    log: (line) => logs.push(line),
    env: { TARSY_REPO_ROOT: ROOT },
  });
  return {
    stack,
    database,
    logs,
    env: {
      TARSY_API_URL: stack.apiUrl,
      TARSY_WS_URL: stack.wsUrl,
      NATS_URL: stack.natsUrl,
      TARSY_SUBJECT_PREFIX: stack.prefix,
      TARSY_STREAM_SUFFIX: stack.streamSuffix,
    },
    async stop() {
      await stack.stop();
      await database.drop();
    },
  };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Each piece of stdout as it arrived, with the milliseconds since start. */
  pieces: { at: number; text: string }[];
}

export interface RunOptions {
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
  /** Sees stdout as it grows (everything so far). */
  onStdout?(sofar: string): void;
}

/** Runs the real `tarsy` executable in a child process with only the given environment. */
export async function tarsy(args: string[], options: RunOptions = {}): Promise<Run> {
  cliMain ??= serviceBundle(resolve(import.meta.dirname, ".."));
  const main = await cliMain;
  return new Promise((done, fail) => {
    const started = Date.now();
    const child = spawn(process.execPath, ["--enable-source-maps", main, ...args], {
      env: { PATH: process.env.PATH ?? "", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const run: Run = { code: null, stdout: "", stderr: "", pieces: [] };
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      run.stdout += text;
      run.pieces.push({ at: Date.now() - started, text });
      options.onStdout?.(run.stdout);
    });
    child.stderr.on("data", (text: string) => {
      run.stderr += text;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`tarsy ${args.join(" ")} did not exit in time\n${run.stdout}\n${run.stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      run.code = code;
      done(run);
    });
    child.stdin.end(options.stdin ?? "");
  });
}

export const DEMO_ALERT = {
  alertname: "PodCrashLooping",
  namespace: "payments",
  pod: "payments-api-7f9c6d5b8-x2kqz",
  severity: "critical",
};
