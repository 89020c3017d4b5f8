import { readFileSync } from "node:fs";

/** Parent pid, process group and state of a process from /proc (Linux), or null. */
function stat(pid: number): { ppid: number; pgid: number; state: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", ppid: Number(fields[1]), pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return stat(pid)?.state === "Z";
}

/**
 * The processes that launched this one: its ancestors up to the leader of its process group
 * (for `pnpm start` in a shell: tsx, sh, pnpm), or only its parent when it leads its group.
 */
export function launcherChain(): number[] {
  const self = stat(process.pid);
  if (!self) return [process.ppid];
  const chain: number[] = [];
  let pid = self.ppid;
  while (pid > 1 && chain.length < 16) {
    chain.push(pid);
    if (pid === self.pgid) return chain;
    const next = stat(pid);
    if (!next) break;
    pid = next.ppid;
  }
  // The group leader is not an ancestor: watch the parent only.
  return [self.ppid];
}

/**
 * Calls `onGone` once when any process that launched this one is gone (e.g. SIGTERM to
 * `pnpm start`, which ends pnpm and its shell but not what the shell started).
 */
export function watchLauncher(onGone: (pid: number) => void, intervalMs = 500): () => void {
  const chain = launcherChain();
  const timer = setInterval(() => {
    const missing = chain.find(gone) ?? (process.ppid !== chain[0] ? chain[0] : undefined);
    if (missing === undefined) return;
    clearInterval(timer);
    onGone(missing);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
