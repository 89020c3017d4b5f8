import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes in prefixed logs
const ANSI = /\x1b\[[0-9;]*m/g;

/** A fresh machine's environment: no database, NATS or provider settings. */
export function freshEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of [
    "DATABASE_URL",
    "NATS_URL",
    "TARSY_CONFIG_DIR",
    "GOOGLE_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "XAI_API_KEY",
  ]) {
    delete env[key];
  }
  return env;
}

/** A command run as a user runs it from the repository root, its output collected. */
export class Run {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private waiters: (() => void)[] = [];

  constructor(command: string, env: NodeJS.ProcessEnv) {
    // Its own process group: Ctrl-C in a terminal signals the whole foreground group.
    this.child = spawn("bash", ["-c", command], { cwd: ROOT, env, detached: true });
    let partial = "";
    const onData = (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) this.lines.push(line.replace(ANSI, ""));
      for (const wake of this.waiters.splice(0)) wake();
    };
    this.child.stdout?.on("data", onData);
    this.child.stderr?.on("data", onData);
    this.exited = new Promise((done) => this.child.once("exit", (code) => done(code)));
  }

  get output(): string {
    return this.lines.join("\n");
  }

  /** The first output line matching `pattern` (waiting for it). */
  async line(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const line of this.lines) {
        const match = pattern.exec(line);
        if (match) return match;
      }
      if (this.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(
          `no line matching ${pattern}; output:\n${this.lines.slice(-40).join("\n")}`,
        );
      }
      await new Promise<void>((wake) => {
        this.waiters.push(wake);
        setTimeout(wake, 500);
      });
    }
  }

  /** Like Ctrl-C in the terminal: SIGINT to the whole process group. */
  interrupt(): void {
    if (this.child.pid && this.child.exitCode === null) process.kill(-this.child.pid, "SIGINT");
  }

  /** Whether any process of its group (services, databases) still runs. */
  groupAlive(): boolean {
    try {
      if (this.child.pid) process.kill(-this.child.pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  kill(): void {
    try {
      if (this.child.pid) process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Parent pid and state of a process, or null when it is gone. */
function stat(pid: number): { ppid: number; state: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", ppid: Number(fields[1]) };
  } catch {
    return null;
  }
}

/** The process and all its descendants now (a /proc scan). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (!s) continue;
    children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  }
  const tree: number[] = [];
  const visit = (pid: number) => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return tree;
}

/** The ones of `pids` still running (zombies count as gone). */
export function stillRunning(pids: readonly number[]): number[] {
  return pids.filter((pid) => {
    const s = stat(pid);
    return s !== null && s.state !== "Z";
  });
}

/** Command line of a process, or "" when it is gone. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}
