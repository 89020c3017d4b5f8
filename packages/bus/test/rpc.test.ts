import { randomBytes } from "node:crypto";
import type { RpcMethodDef } from "@tarsy/contracts";
import { createLogger } from "@tarsy/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { coreOf } from "../src/core.ts";
import { type Bus, connectBus } from "../src/index.ts";
import {
  RpcHandlerError,
  RpcInvalidRequestError,
  RpcNoRespondersError,
  RpcRemoteError,
  type RpcService,
  RpcTimeoutError,
  requestRpc,
  rpcRoute,
  serveRpc,
} from "../src/rpc.ts";

const AddDef = {
  method: "math.add",
  request: z.object({ a: z.number(), b: z.number() }),
  reply: z.object({ sum: z.number(), by: z.string() }),
} satisfies RpcMethodDef;
const SlowDef = {
  method: "slow",
  request: z.object({ ms: z.number() }),
  reply: z.object({ ok: z.literal(true) }),
} satisfies RpcMethodDef;
const BadReplyDef = {
  method: "bad",
  request: z.object({}),
  reply: z.object({ n: z.number() }),
} satisfies RpcMethodDef;

describe("rpc: typed request/reply over a NATS service", () => {
  let bus: Bus;
  let services: RpcService[] = [];
  const prefix = `t${randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    const logger = createLogger({ service: "rpc-test", level: "silent" });
    bus = await connectBus({
      servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
      name: "rpc-test",
      logger,
      prefix,
    });
    const start = (id: string) =>
      serveRpc(bus, { name: "rpc-test", version: "1.0.0" }, [
        rpcRoute({
          def: AddDef,
          subjectPrefix: "calc",
          queue: "calc",
          handler: async (r) => ({ sum: r.a + r.b, by: id }),
        }),
        rpcRoute({
          def: AddDef,
          subjectPrefix: `calc.replica.${id}`,
          queue: "",
          handler: async (r) => {
            if (r.a < 0) throw new RpcHandlerError(422, "negative", "negative numbers are refused");
            if (r.a === 13) throw new Error("unlucky");
            return { sum: r.a + r.b, by: id };
          },
        }),
        rpcRoute({
          def: SlowDef,
          subjectPrefix: "calc",
          queue: "calc",
          handler: async (r) => {
            await new Promise((res) => setTimeout(res, r.ms));
            return { ok: true as const };
          },
        }),
        rpcRoute({
          def: BadReplyDef,
          subjectPrefix: "calc",
          queue: "calc",
          handler: async () => ({ n: "x" }) as never,
        }),
      ]);
    services = [await start("one"), await start("two")];
  });
  afterAll(async () => {
    for (const s of services) await s.stop(1_000);
    await bus.close();
  });

  it("spreads shared-subject requests over the queue group and answers replica subjects from that replica", async () => {
    const by = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const reply = await requestRpc(bus, AddDef, "calc", { a: i, b: 1 }, { timeoutMs: 2_000 });
      expect(reply.sum).toBe(i + 1);
      by.add(reply.by);
    }
    expect(by).toEqual(new Set(["one", "two"]));
    for (let i = 0; i < 5; i++) {
      const reply = await requestRpc(
        bus,
        AddDef,
        "calc.replica.two",
        { a: 1, b: 1 },
        { timeoutMs: 2_000 },
      );
      expect(reply.by).toBe("two");
    }
  });

  it("maps every failure to a typed error", async () => {
    await expect(
      requestRpc(bus, AddDef, "calc", { a: "x" } as never, { timeoutMs: 1_000 }),
    ).rejects.toBeInstanceOf(RpcInvalidRequestError);
    await expect(
      requestRpc(bus, AddDef, "calc.replica.gone", { a: 1, b: 1 }, { timeoutMs: 1_000 }),
    ).rejects.toBeInstanceOf(RpcNoRespondersError);
    await expect(
      requestRpc(bus, SlowDef, "calc", { ms: 800 }, { timeoutMs: 200 }),
    ).rejects.toBeInstanceOf(RpcTimeoutError);
    const refused = await requestRpc(
      bus,
      AddDef,
      "calc.replica.one",
      { a: -1, b: 1 },
      { timeoutMs: 1_000 },
    ).catch((e) => e);
    expect(refused).toBeInstanceOf(RpcRemoteError);
    expect(refused).toMatchObject({ status: 422, remoteCode: "negative" });
    expect(refused.message).toContain("negative numbers are refused");
    const crashed = await requestRpc(
      bus,
      AddDef,
      "calc.replica.one",
      { a: 13, b: 1 },
      { timeoutMs: 1_000 },
    ).catch((e) => e);
    expect(crashed).toMatchObject({
      code: "rpc_remote_error",
      status: 500,
      remoteCode: "internal",
    });
    const invalidReply = await requestRpc(bus, BadReplyDef, "calc", {}, { timeoutMs: 1_000 }).catch(
      (e) => e,
    );
    expect(invalidReply).toMatchObject({ code: "rpc_remote_error", remoteCode: "internal" });
    // A body the server cannot parse is refused with bad_request.
    const raw = await coreOf(bus).connection.request(
      bus.subject("calc.math.add"),
      new TextEncoder().encode("{not json"),
      {
        timeout: 1_000,
      },
    );
    expect(raw.headers?.get("Nats-Service-Error-Code")).toBe("400");
  });

  it("stop() stops taking requests but lets one in flight finish", async () => {
    const extra = await serveRpc(bus, { name: "rpc-test-stop", version: "1.0.0" }, [
      rpcRoute({
        def: SlowDef,
        subjectPrefix: "stopper",
        queue: "",
        handler: async (r) => {
          await new Promise((res) => setTimeout(res, r.ms));
          return { ok: true as const };
        },
      }),
    ]);
    const inFlight = requestRpc(bus, SlowDef, "stopper", { ms: 400 }, { timeoutMs: 3_000 });
    await expect.poll(() => extra.inFlight(), { timeout: 3_000 }).toBe(1);
    const stopped = extra.stop(5_000);
    await expect(inFlight).resolves.toEqual({ ok: true });
    await stopped;
    await expect(
      requestRpc(bus, SlowDef, "stopper", { ms: 1 }, { timeoutMs: 1_000 }),
    ).rejects.toBeInstanceOf(RpcNoRespondersError);
  });
});
