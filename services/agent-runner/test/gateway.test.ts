import {
  listLLMInteractions,
  listMCPInteractions,
  listMessages,
  listSessionExecutions,
  listSessionTimeline,
} from "@tarsy/db";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runExecution } from "../src/execution.ts";
import { createGatewayTools } from "../src/gateway.ts";
import {
  createEnv,
  type Env,
  firstLLMInteraction,
  logger,
  PLANTED_SECRET,
  record,
  runnerDeps,
  type ServiceProcess,
  seedExecution,
  startGatewayProcess,
  startLlm,
} from "./support.ts";

let env: Env;
let gateway: ServiceProcess;
beforeAll(async () => {
  env = await createEnv();
  gateway = await startGatewayProcess(env);
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  await env?.cleanup();
});

const SUMMARIZER = { system: "summarizing technical output" };

async function run(script: unknown, options: Parameters<typeof seedExecution>[1] = {}) {
  const llm = await startLlm(script);
  const request = await seedExecution(env, options);
  const rec = await record(env, request.session_id);
  const tools = createGatewayTools(createMcpGatewayClient(env.bus), logger);
  try {
    const finished = await runExecution(
      runnerDeps(env, llm.client, tools),
      request,
      new AbortController().signal,
    );
    return { finished, request, rec };
  } finally {
    rec.stop();
    await llm.stop();
  }
}

async function everythingStored(sessionId: string, executionId: string): Promise<string> {
  const p = env.db.prisma;
  const rows = await Promise.all([
    listSessionTimeline(p, sessionId),
    listMessages(p, executionId),
    listLLMInteractions(p, { sessionId }),
    listMCPInteractions(p, { sessionId }),
    listSessionExecutions(p, sessionId),
  ]);
  return JSON.stringify(rows);
}

describe("with the real mcp-gateway and server-everything", () => {
  test("tool calls go through the gateway and the execution's sessions are released", async () => {
    const { finished, request } = await run([
      {
        text: "Echoing.",
        tool_calls: [{ id: "e1", name: "everything.echo", arguments: { message: "hello" } }],
      },
      { text: "The echo worked." },
    ]);
    expect(finished.status).toBe("completed");
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    const call = timeline.find((e) => e.eventType === "llm_tool_call");
    expect(call?.content).toContain("Echo: hello");
    expect(call?.metadata).toMatchObject({
      server_name: "everything",
      tool_name: "echo",
      is_error: false,
    });
    const health = await createMcpGatewayClient(env.bus).health();
    expect(health.open_executions).toBe(0);
  });

  test("a secret planted in a tool result is masked everywhere and unmasked nowhere; the large result is summarized", async () => {
    const { finished, request, rec } = await run([
      { match: SUMMARIZER, text: "SUMMARY: the server environment has 1 token.", chunk_size: 8 },
      {
        text: "Reading the environment.",
        tool_calls: [{ id: "g1", name: "everything.get-env", arguments: {} }],
      },
      { text: "Environment checked." },
    ]);
    expect(finished.status).toBe("completed");

    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([
      ["llm_response", "completed"],
      ["llm_tool_call", "completed"],
      ["mcp_tool_summary", "completed"],
      ["final_analysis", "completed"],
    ]);
    const toolCall = timeline[1]!;
    expect(toolCall.content).toContain("PLANTED_GITHUB_TOKEN");
    expect(toolCall.content).toMatch(/PLANTED_GITHUB_TOKEN"?: "?\[MASKED_/);
    expect(timeline[2]?.content).toBe("SUMMARY: the server environment has 1 token.");
    expect(timeline[2]?.metadata).toMatchObject({
      server_name: "everything",
      tool_name: "get-env",
    });

    const messages = await listMessages(env.db.prisma, request.execution_id);
    const toolMessage = messages.find((m) => m.role === "tool");
    expect(toolMessage?.content).toMatch(
      /^\[NOTE: The result of everything\.get-env was about \d+ tokens and has been summarized to save context\.\]\n\n<untrusted_data source="tool_result" tool="everything\.get-env">\n/,
    );
    expect(toolMessage?.content).toContain("SUMMARY: the server environment has 1 token.");

    const summarization = await firstLLMInteraction(env, request.session_id, "summarization");
    const inline = JSON.stringify(summarization.llmRequest);
    expect(inline).toContain("[MASKED_");
    expect(summarization.responseText).toBe("SUMMARY: the server environment has 1 token.");

    // The secret is nowhere: not in any row, event or chunk.
    const stored = await everythingStored(request.session_id, request.execution_id);
    expect(stored).toContain("PLANTED_GITHUB_TOKEN");
    expect(stored).not.toContain(PLANTED_SECRET);
    expect(rec.events.length).toBeGreaterThan(0);
    expect(JSON.stringify(rec.events)).toContain("PLANTED_GITHUB_TOKEN");
    expect(JSON.stringify(rec.events)).not.toContain(PLANTED_SECRET);
    expect(JSON.stringify(rec.chunks)).not.toContain(PLANTED_SECRET);
  });

  test("summarization fails open to the raw (masked) result", async () => {
    const { finished, request } = await run([
      // A provider error is retried once on the same provider: it fails twice here.
      { match: SUMMARIZER, error: { message: "summarizer overloaded", code: "unavailable" } },
      { match: SUMMARIZER, error: { message: "summarizer overloaded", code: "unavailable" } },
      {
        text: "Reading the environment.",
        tool_calls: [{ id: "g1", name: "everything.get-env", arguments: {} }],
      },
      { text: "Done without a summary." },
    ]);
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Done without a summary.",
    });
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => e.eventType)).toEqual([
      "llm_response",
      "llm_tool_call",
      "final_analysis",
    ]);
    const messages = await listMessages(env.db.prisma, request.execution_id);
    const toolMessage = messages.find((m) => m.role === "tool");
    expect(toolMessage?.content).toContain("PLANTED_GITHUB_TOKEN");
    expect(toolMessage?.content).not.toContain("[NOTE:");
    expect(toolMessage?.content).not.toContain(PLANTED_SECRET);
    const summarization = await firstLLMInteraction(env, request.session_id, "summarization");
    expect(summarization.errorMessage).toContain("summarizer overloaded");
  });
});
