import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { serviceBundle } from "./bundle.ts";
import { childEnvironment } from "./env.ts";
import { type Guard, PHASE_SERVICES } from "./guard.ts";

const COLORS = [36, 33, 35, 32, 34, 31, 96, 93];
const LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};

export interface ServiceSpec {
  /** Shown as the log prefix, e.g. `agent-runner-2`. */
  name: string;
  cwd: string;
  /** Its own variables, over those every child inherits (see `childEnvironment`). */
  env: Record<string, string>;
  /** A log line matching this means the service is up (default: pino's "service started"). */
  ready?: RegExp;
  /** Told about the process so it never outlives the stack. */
  guard?: Guard;
  /** Called once the process runs, before it is ready (a failed start can then stop it). */
  onSpawn?: (running: RunningProcess) => void;
}

export interface RunningProcess {
  name: string;
  child: ChildProcess;
  /** Every line it printed (JSON where pino wrote it). */
  lines: string[];
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** kill -9: a crash, for recovery tests. */
  kill(): Promise<void>;
}

export type LogSink = (line: string) => void;

/** One pino JSON line as `prefix | LEVEL msg key=value…`, anything else as is. */
export function formatLine(prefix: string, raw: string): string {
  try {
    const record = JSON.parse(raw) as Record<string, unknown>;
    const { level, time, msg, pid, hostname, service, name, ...rest } = record;
    const fields = Object.entries(rest)
      .filter(([, v]) => v !== undefined && typeof v !== "object")
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(" ");
    const lvl = LEVELS[Number(level)] ?? "INFO";
    return `${prefix} ${lvl.padEnd(5)} ${String(msg ?? "")}${fields ? `  ${fields}` : ""}`;
  } catch {
    return `${prefix} ${raw}`;
  }
}

let colorIndex = 0;

/** Signals a process group, if any of it is left. */
function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // nothing left
  }
}

/**
 * Starts the service in `spec.cwd` (its bundle, see bundle.ts) and resolves once it is ready. The
 * process leads a process group of its own: a terminal's Ctrl-C reaches only the stack, which
 * stops services in order, and stopping one ends whatever it started (MCP stdio servers).
 */
export async function startProcess(
  spec: ServiceSpec,
  sink: LogSink,
  timeoutMs = 180_000,
): Promise<RunningProcess> {
  const color = COLORS[colorIndex++ % COLORS.length];
  const prefix = `\x1b[${color}m${spec.name.padEnd(16)}\x1b[0m|`;
  const main = await serviceBundle(spec.cwd);
  const child = spawn(process.execPath, ["--enable-source-maps", main], {
    cwd: spec.cwd,
    env: childEnvironment(spec.env),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  spec.guard?.watch(child.pid, "SIGTERM", PHASE_SERVICES);
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line);
      sink(formatLine(prefix, line));
      for (const listener of listeners) listener(line);
    });
  }
  const exited = once(child, "exit").then((result) => {
    // What it started and left behind goes with it.
    signalGroup(child.pid, "SIGKILL");
    spec.guard?.forget(child.pid);
    return result;
  });
  const waitFor = (pattern: RegExp, waitMs = timeoutMs) =>
    new Promise<string>((resolve, reject) => {
      const found = lines.find((l) => pattern.test(l));
      if (found) return resolve(found);
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`${spec.name}: no log line matching ${pattern} within ${waitMs} ms`));
      }, waitMs);
      const listener = (line: string) => {
        if (!pattern.test(line)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        resolve(line);
      };
      listeners.add(listener);
      void exited.then(() => {
        if (!listeners.has(listener)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        reject(
          new Error(`${spec.name} exited with ${child.exitCode}:\n${lines.slice(-15).join("\n")}`),
        );
      });
    });
  const running: RunningProcess = {
    name: spec.name,
    child,
    lines,
    waitFor,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
  spec.onSpawn?.(running);
  await waitFor(spec.ready ?? /"msg":"service started"/);
  return running;
}
