/**
 * A separate process that takes runner work and never finishes it: the crash test kills it
 * with SIGKILL to show its unacknowledged work is redelivered elsewhere.
 */
import { createLogger } from "@tarsy/runtime";
import { connectBus } from "../../src/index.ts";

const [servers = "", prefix = "", streamSuffix = ""] = process.argv.slice(2);
const bus = await connectBus({
  servers,
  prefix,
  streamSuffix,
  name: "hanging-worker",
  logger: createLogger({ service: "hanging-worker", level: "silent" }),
});
await bus.consume(
  "runner",
  {
    executionRequested: async (payload, ctx) => {
      process.stdout.write(
        `${JSON.stringify({ execution_id: payload.execution_id, delivery: ctx.deliveryCount })}\n`,
      );
      await new Promise(() => {});
    },
  },
  { fetchExpiresMs: 1_000 },
);
process.stdout.write("ready\n");
