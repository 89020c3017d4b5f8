import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isListening } from "../src/infra.ts";
import { commandLine, freshEnv, processTree, Run, stillRunning } from "./support.ts";

const runs: Run[] = [];
afterEach(() => {
  for (const r of runs.splice(0)) r.kill();
});

/** `pnpm start` booted: its processes, ports and temporary directory, captured before a signal. */
interface Booted {
  run: Run;
  /** The pnpm process (top of what the user started). */
  pnpm: number;
  /** The node process running packages/stack/src/main.ts. */
  stack: number;
  pids: number[];
  ports: number[];
  tempDir: string;
}

async function boot(): Promise<Booted> {
  const run = new Run("pnpm start --runners 1", freshEnv());
  runs.push(run);
  const stack = Number((await run.line(/stack process (\d+)/, 60_000))[1]);
  const tempDir = (await run.line(/temporary directory: (\S+)/, 120_000))[1] ?? "";
  const pg = Number((await run.line(/embedded Postgres on port (\d+)/, 120_000))[1]);
  const [, api, ws] = await run.line(/API and dashboard: (\S+)\s+WebSocket: (\S+)/, 180_000);
  const root = run.child.pid ?? 0;
  const pids = processTree(root);
  const pnpm = pids.find((pid) => /\bpnpm\b/.test(commandLine(pid))) ?? root;
  expect(existsSync(tempDir)).toBe(true);
  // Every service (6), the embedded Postgres and the guardian are part of the tree.
  expect(pids.length).toBeGreaterThan(10);
  return {
    run,
    pnpm,
    stack,
    pids,
    ports: [pg, Number(new URL(api ?? "").port), Number(new URL(ws ?? "").port)],
    tempDir,
  };
}

/** Nothing of the stack is left: no process of the tree, no listening port, no temp dir. */
async function expectAllGone(booted: Booted): Promise<void> {
  await expect
    .poll(() => stillRunning(booted.pids).map((pid) => `${pid} ${commandLine(pid)}`), {
      timeout: 45_000,
      interval: 250,
    })
    .toEqual([]);
  for (const port of booted.ports) expect(await isListening("127.0.0.1", port)).toBe(false);
  await expect.poll(() => existsSync(booted.tempDir), { timeout: 5_000 }).toBe(false);
}

describe("pnpm start stops everything it started", () => {
  it("SIGTERM to the pnpm process", async () => {
    const booted = await boot();
    process.kill(booted.pnpm, "SIGTERM");
    await expectAllGone(booted);
    expect(booted.run.output).toMatch(/launcher process \d+ is gone/);
  }, 240_000);

  it("SIGINT to the stack's own process", async () => {
    const booted = await boot();
    process.kill(booted.stack, "SIGINT");
    await expectAllGone(booted);
    expect(booted.run.output).toContain("stopping…");
  }, 240_000);

  it("SIGTERM to the stack's own process", async () => {
    const booted = await boot();
    process.kill(booted.stack, "SIGTERM");
    await expectAllGone(booted);
  }, 240_000);

  it("SIGHUP to the pnpm process (the terminal closed)", async () => {
    const booted = await boot();
    process.kill(booted.pnpm, "SIGHUP");
    await expectAllGone(booted);
  }, 240_000);

  it("SIGKILL to the stack's own process: the guardian ends the rest", async () => {
    const booted = await boot();
    process.kill(booted.stack, "SIGKILL");
    await expectAllGone(booted);
  }, 240_000);
});

describe("the guardian", () => {
  it("ends a nats-server and removes its directory when the process that started it is killed", async () => {
    const script = fileURLToPath(new URL("./fixtures/guarded-nats.ts", import.meta.url));
    const owner = spawn(process.execPath, ["--import", "tsx", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: owner.stdout }).once("line", resolve);
        owner.once("exit", (code) => reject(new Error(`exited early (${code})`)));
      });
      const started = JSON.parse(line) as {
        pid: number;
        dir: string;
        url: string;
        guardian: number;
      };
      const port = Number(new URL(started.url.replace("nats://", "http://")).port);
      expect(await isListening("127.0.0.1", port)).toBe(true);
      expect(existsSync(started.dir)).toBe(true);
      expect(stillRunning([started.pid, started.guardian])).toHaveLength(2);

      owner.kill("SIGKILL");
      await expect
        .poll(() => stillRunning([started.pid, started.guardian]), { timeout: 20_000 })
        .toEqual([]);
      expect(await isListening("127.0.0.1", port)).toBe(false);
      expect(existsSync(started.dir)).toBe(false);
    } finally {
      owner.kill("SIGKILL");
    }
  }, 60_000);
});
