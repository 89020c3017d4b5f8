import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { GuardCommand, GuardSignal } from "./guard-protocol.ts";

/** Order in which the guardian ends what it watches: services, then the databases. */
export const PHASE_SERVICES = 0;
export const PHASE_INFRA = 1;

/**
 * The stack's side of the guardian (see guardian.ts): registers what must not outlive the stack
 * process. Never keeps the stack process alive.
 */
export interface Guard {
  /** End this process (and its process group) with `signal` if the stack dies first. */
  watch(pid: number | undefined, signal: GuardSignal, phase: number): void;
  /** It stopped normally: nothing to do for it any more. */
  forget(pid: number | undefined): void;
  /** Remove this directory when the stack is gone. */
  removeDir(dir: string): void;
  /** The guardian's pid (for tests and the banner). */
  readonly pid: number | undefined;
  /** Tells the guardian the stack is done: it removes the directories and exits. */
  close(): void;
}

const GUARDIAN = fileURLToPath(new URL("./guardian.ts", import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

export function startGuard(): Guard {
  const child = spawn(process.execPath, ["--import", "tsx", GUARDIAN], {
    cwd: PACKAGE_DIR,
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.unref();
  const stdin = child.stdin;
  // The pipe must not keep the stack's event loop alive either.
  (stdin as unknown as { unref?: () => void } | null)?.unref?.();
  stdin?.on("error", () => {});
  const send = (command: GuardCommand) => {
    if (stdin && !stdin.destroyed && stdin.writable) stdin.write(`${JSON.stringify(command)}\n`);
  };
  return {
    pid: child.pid,
    watch(pid, signal, phase) {
      if (pid) send({ watch: pid, signal, phase });
    },
    forget(pid) {
      if (pid) send({ forget: pid });
    },
    removeDir(dir) {
      send({ dir });
    },
    close() {
      stdin?.end();
    },
  };
}
