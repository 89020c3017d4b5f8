import { describe, expect, it } from "vitest";
import { withTimeout } from "./timeout.ts";

describe("withTimeout", () => {
  it("resolves and rejects like the promise when it settles in time", async () => {
    await expect(withTimeout(Promise.resolve(7), 1_000, () => new Error("late"))).resolves.toBe(7);
    await expect(
      withTimeout(Promise.reject(new Error("broken")), 1_000, () => new Error("late")),
    ).rejects.toThrow("broken");
  });

  it("rejects with the given error when the promise takes longer", async () => {
    const never = new Promise<never>(() => {});
    await expect(withTimeout(never, 20, () => new Error("no answer in 20 ms"))).rejects.toThrow(
      "no answer in 20 ms",
    );
  });
});
