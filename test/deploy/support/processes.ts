import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

/** A free TCP port on 127.0.0.1 (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolvePort(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

export interface Started {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
}

export function start(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Started {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (d: Buffer) => {
    text += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    text += d.toString();
  });
  const exited = new Promise<number | string>((resolveExit) =>
    child.once("exit", (code, signal) => resolveExit(code ?? signal ?? -1)),
  );
  return { child, output: () => text, exited };
}

/** Runs a command to completion: its exit code and combined output. */
export async function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<{ code: number | string; output: string }> {
  const started = start(command, args, options);
  const code = await started.exited;
  return { code, output: started.output() };
}

/** GET a URL: status and body, or undefined when nothing answers. */
export async function get(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined;
  }
}
