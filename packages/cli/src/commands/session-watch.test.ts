import { SessionStatusSchema } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import { sessionExitCode } from "./session-watch.ts";

describe("session watch's exit code", () => {
  it("says how the session ended, and nothing while it runs", () => {
    const codes = Object.fromEntries(
      SessionStatusSchema.options.map((status) => [status, sessionExitCode(status)]),
    );
    expect(codes).toEqual({
      pending: undefined,
      in_progress: undefined,
      cancelling: undefined,
      completed: 0,
      failed: 3,
      cancelled: 4,
      timed_out: 5,
    });
  });
});
