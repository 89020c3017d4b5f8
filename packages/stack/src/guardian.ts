/**
 * The stack's guardian: a small process of its own (own session and process group, so a
 * terminal's Ctrl-C or hang-up does not reach it) that the stack tells, over its stdin, what it
 * started. When its stdin closes, the stack process is gone, whether it stopped cleanly, was
 * signalled or was killed with SIGKILL: the guardian then ends what is still running, phase by
 * phase (services before the databases they use), and removes the temporary directories.
 *
 * Lines on stdin (JSON): `{"watch":pid,"signal":"SIGTERM","phase":0}`, `{"forget":pid}`,
 * `{"dir":"/tmp/…"}`.
 */
import { rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { type GuardCommand, GuardCommandSchema } from "./guard-protocol.ts";

const GRACE_MS = 10_000;

interface Target {
  pid: number;
  signal: NodeJS.Signals;
  phase: number;
}

const targets = new Map<number, Target>();
const dirs = new Set<string>();

function apply(command: GuardCommand): void {
  if ("watch" in command) {
    targets.set(command.watch, {
      pid: command.watch,
      signal: command.signal,
      phase: command.phase,
    });
  } else if ("forget" in command) {
    targets.delete(command.forget);
  } else {
    dirs.add(command.dir);
  }
}

/** Whether the process, or any process of the group it leads, still runs. */
function running(pid: number): boolean {
  for (const id of [pid, -pid]) {
    try {
      process.kill(id, 0);
      return true;
    } catch {
      // gone
    }
  }
  return false;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

async function endAll(): Promise<void> {
  const phases = [...new Set([...targets.values()].map((t) => t.phase))].sort((a, b) => a - b);
  for (const phase of phases) {
    const group = [...targets.values()].filter((t) => t.phase === phase);
    for (const t of group) signal(t.pid, t.signal);
    const deadline = Date.now() + GRACE_MS;
    while (group.some((t) => running(t.pid)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    // Whatever is left of each target's process group (e.g. a service's MCP subprocesses).
    for (const t of group) {
      signal(-t.pid, "SIGKILL");
      signal(t.pid, "SIGKILL");
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

let ending = false;
const end = () => {
  if (ending) return;
  ending = true;
  endAll().finally(() => process.exit(0));
};
// Only the end of its stdin (or an explicit SIGTERM) ends the guardian.
process.on("SIGINT", () => {});
process.on("SIGHUP", () => {});
process.on("SIGTERM", end);
createInterface({ input: process.stdin })
  .on("line", (line) => {
    try {
      apply(GuardCommandSchema.parse(JSON.parse(line)));
    } catch {
      // not a command: ignored
    }
  })
  .on("close", end);
