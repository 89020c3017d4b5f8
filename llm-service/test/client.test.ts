import { createServer } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { createLlmClient, LlmInvalidArgumentError, LlmUnavailableError } from "@tarsy/llm-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadProtos } from "../src/proto.ts";
import { baseInput, collect, type Harness, startHarness } from "./harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

describe("llm-client over real gRPC", () => {
  it("reports SERVING through the standard health service", async () => {
    expect(await h.client.health()).toBe("SERVING");
  });

  it("maps a refused connection to LlmUnavailableError", async () => {
    const client = createLlmClient({ address: `127.0.0.1:${await freePort()}` });
    try {
      await expect(
        collect(
          client.generate(
            baseInput({ provider: "scripted", backend: "scripted", script: "- text: x" }),
          ),
        ),
      ).rejects.toBeInstanceOf(LlmUnavailableError);
      await expect(client.health()).rejects.toBeInstanceOf(LlmUnavailableError);
    } finally {
      client.close();
    }
  });

  it("maps a request the service rejects to LlmInvalidArgumentError with its reason", async () => {
    const error = await collect(
      h.client.generate(baseInput({ provider: "openai", backend: "no-such-backend" })),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmInvalidArgumentError);
    expect((error as Error).message).toContain("no-such-backend");
  });

  it("accepts a multi-megabyte conversation (big tool results) in one request", async () => {
    const big = "x".repeat(6 * 1024 * 1024);
    const chunks = await collect(
      h.client.generate(
        baseInput(
          { provider: "scripted", backend: "scripted", script: "- text: read it all" },
          {
            sessionId: "big-request",
            messages: [
              { role: "user", content: "logs follow" },
              {
                role: "tool",
                content: big,
                toolCallId: "c1",
                toolName: "kubernetes-server.pods_log",
              },
            ],
          },
        ),
      ),
    );
    expect(chunks.find((c) => c.type === "text")).toEqual({ type: "text", content: "read it all" });
  });

  it("rejects malformed input before calling, as LlmInvalidArgumentError", async () => {
    await expect(
      collect(h.client.generate(baseInput({ provider: "scripted" }, { messages: [] }))),
    ).rejects.toBeInstanceOf(LlmInvalidArgumentError);
  });

  it("cancels the call on the service when the consumer stops reading early", async () => {
    const script = "- text: abcdefghijklmnopqrst\n  chunk_size: 1\n  chunk_delay_ms: 100\n";
    const input = baseInput(
      { provider: "scripted", backend: "scripted", script },
      { sessionId: "early-break" },
    );
    const started = Date.now();
    for await (const chunk of h.client.generate(input)) {
      expect(chunk).toEqual({ type: "text", content: "a" });
      break;
    }
    await expect
      .poll(() => h.logLines.some((l) => l.includes("generate cancelled by the caller")), {
        timeout: 2000,
      })
      .toBe(true);
    expect(Date.now() - started).toBeLessThan(1500); // not the 20 × 100 ms the full answer takes
  });

  it("drains in-flight streams on shutdown while health reports NOT_SERVING", async () => {
    const own = await startHarness();
    const script = "- text: finished during shutdown\n  delay_ms: 300\n";
    const answer = collect(
      own.client.generate(
        baseInput({ provider: "scripted", backend: "scripted", script }, { sessionId: "drain" }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stopping = own.server.shutdown(5000);
    expect(await own.client.health()).toBe("NOT_SERVING");
    expect((await answer).find((c) => c.type === "text")).toEqual({
      type: "text",
      content: "finished during shutdown",
    });
    await stopping;
    own.client.close();
  });

  it("streams health changes to grpc.health.v1 Watch subscribers", async () => {
    const own = await startHarness();
    const Health = grpc.makeGenericClientConstructor(loadProtos().healthService, "Health");
    const health = new Health(own.address, grpc.credentials.createInsecure());
    const watch = (
      health as unknown as { Watch: (req: object) => grpc.ClientReadableStream<{ status: string }> }
    ).Watch({ service: "llm.v1.LLMService" });
    const statuses: string[] = [];
    const ended = new Promise<void>((resolve) => {
      watch.on("data", (m: { status: string }) => {
        statuses.push(m.status);
        if (m.status === "SERVING") void own.server.shutdown(1000);
      });
      watch.on("end", () => resolve());
      watch.on("error", () => resolve());
    });
    await ended;
    expect(statuses).toEqual(["SERVING", "NOT_SERVING"]);
    health.close();
    own.client.close();
  });
});
