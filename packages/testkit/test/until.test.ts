import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { isAlive, until } from "../src/index.ts";

describe("until", () => {
  it("resolves with the first truthy value the probe gives", async () => {
    const values = [null, undefined, false, 0, "", { n: 1 }, { n: 2 }];
    let calls = 0;
    const value = await until(async () => values[calls++], { what: "a value", intervalMs: 1 });
    expect(value).toEqual({ n: 1 });
    expect(calls).toBe(6);
  });

  it("fails at once on a probe's error unless told to retry", async () => {
    let calls = 0;
    const failing = () => {
      calls++;
      throw new Error("boom");
    };
    await expect(until(failing, { what: "x", intervalMs: 1 })).rejects.toThrow("boom");
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      until(() => (++calls < 3 ? failing() : "up"), {
        what: "x",
        intervalMs: 1,
        retryErrors: true,
      }),
    ).resolves.toBe("up");
  });

  it("times out naming what it waited for and the last error seen", async () => {
    let calls = 0;
    const started = Date.now();
    const waiting = until(
      () => {
        throw new Error(`not yet ${++calls}`);
      },
      { what: "the server to answer", timeoutMs: 200, intervalMs: 10, retryErrors: true },
    );
    const error = await waiting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(calls).toBeGreaterThan(1);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(
      `timed out waiting for the server to answer after 200 ms (last seen: not yet ${calls})`,
    );
    expect((error as Error).cause).toEqual(new Error(`not yet ${calls}`));
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it("times out naming the last value seen", async () => {
    await expect(
      until(() => false, { what: "a flag", timeoutMs: 50, intervalMs: 5 }),
    ).rejects.toThrow("timed out waiting for a flag after 50 ms (last seen: false)");
  });
});

describe("isAlive", () => {
  it("is true for this process and false for one that exited", async () => {
    expect(isAlive(process.pid)).toBe(true);
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    const pid = child.pid as number;
    await once(child, "exit");
    expect(isAlive(pid)).toBe(false);
  });
});
