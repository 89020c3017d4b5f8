import { describe, expect, it } from "vitest";
import { UsageError } from "../command.ts";
import { loadCliEnv } from "../env.ts";
import { eventsReplayCommand } from "./events-replay.ts";

/** Fails before any NATS connection: the env points nowhere on purpose. */
const run = (args: string[]) =>
  eventsReplayCommand.run({
    args,
    env: loadCliEnv({ NATS_URL: "nats://127.0.0.1:1" }),
    io: { out: () => {}, err: () => {} } as never,
  });

describe("tarsy events replay across projects", () => {
  it("wants --all-projects to read every session's events, and not with --session", async () => {
    await expect(run([])).rejects.toThrow(UsageError);
    await expect(run([])).rejects.toThrow(/--all-projects/);
    await expect(run(["--all-projects", "-s", "abc"])).rejects.toThrow(/not both/);
    // The flag is taken: the next check (a bad --from-seq) is what refuses this one.
    await expect(run(["--all-projects", "--from-seq", "0"])).rejects.toThrow(/--from-seq/);
  });
});
