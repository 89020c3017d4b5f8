import {
  createLlmClient,
  type GenerateInput,
  type LlmChunk,
  type LlmClient,
} from "@tarsy/llm-client";
import { createLogger } from "@tarsy/runtime";
import { createLlmServer, type LlmServer, type LlmServerOptions } from "../src/index.ts";

export interface Harness {
  client: LlmClient;
  server: LlmServer;
  address: string;
  /** Every pino line llm-service wrote, raw. */
  logLines: string[];
  stop(): Promise<void>;
}

/** Starts llm-service on a free loopback port (real gRPC), with pino captured. */
export async function startHarness(
  secrets: Record<string, string> = {},
  extra: Partial<LlmServerOptions> = {},
): Promise<Harness> {
  const logLines: string[] = [];
  const logger = createLogger({
    service: "llm-service",
    level: "debug",
    destination: { write: (line: string) => void logLines.push(line) },
  });
  const server = createLlmServer({
    logger,
    getSecret: (name) => secrets[name],
    retry: { maxRetries: 3, baseDelayMs: 5, maxDelayMs: 20 },
    ...extra,
  });
  const port = await server.listen("127.0.0.1", 0);
  const address = `127.0.0.1:${port}`;
  const client = createLlmClient({ address });
  return {
    client,
    server,
    address,
    logLines,
    async stop() {
      client.close();
      await server.shutdown(1000);
    },
  };
}

export async function collect(stream: AsyncIterable<LlmChunk>): Promise<LlmChunk[]> {
  const chunks: LlmChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

export const textOf = (chunks: LlmChunk[], type: "text" | "thinking" = "text") =>
  chunks.flatMap((c) => (c.type === type ? [c.content] : [])).join("");

export const toolCallsOf = (chunks: LlmChunk[]) => chunks.filter((c) => c.type === "tool_call");

export const errorOf = (chunks: LlmChunk[]) => chunks.find((c) => c.type === "error");

export const usageOf = (chunks: LlmChunk[]) => chunks.find((c) => c.type === "usage");

/** A conversation with one MCP tool, as the runner sends it. */
export const POD_TOOL = {
  name: "kubernetes-server.pods_list",
  description: "List pods in a namespace",
  parameters: {
    type: "object",
    properties: { namespace: { type: "string" } },
    required: ["namespace"],
  },
};

export function baseInput(
  config: GenerateInput["config"],
  overrides: Partial<GenerateInput> = {},
): GenerateInput {
  return {
    sessionId: "sess-1",
    executionId: "exec-1",
    agentName: "KubernetesAgent",
    messages: [
      { role: "system", content: "You are an SRE agent." },
      { role: "user", content: "Why is pod web-1 crashing?" },
    ],
    config,
    ...overrides,
  };
}
