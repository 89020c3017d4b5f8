import type {
  ChatMessageResponse,
  LLMInteractionDetail,
  MCPInteractionDetail,
  SessionDetail,
  TraceListResponse,
} from "@tarsy/contracts";
import {
  ChatMessageResponseSchema,
  LLMInteractionDetailSchema,
  MCPInteractionDetailSchema,
  SessionDetailSchema,
  TraceListResponseSchema,
} from "@tarsy/contracts";
import {
  appendMessages,
  getSessionDetail,
  openChatTurn,
  recordLLMInteraction,
  recordMCPInteraction,
  transitionStageStatus,
} from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finishSession, seedInvestigation, seedSession, startSession } from "./seed.ts";
import {
  conforms,
  type ErrorBody,
  eventually,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const ask = <T = ChatMessageResponse>(
  id: string,
  content: unknown,
  headers?: Record<string, string>,
) =>
  request<T>(`${h.url}/api/v1/sessions/${id}/chat/messages`, {
    body: { content },
    ...(headers ? { headers } : {}),
  });

describe("chat messages", () => {
  it("accepts a question on a finished session, one at a time, and tells the orchestrator", async () => {
    const s = await seedSession(h.db.prisma);
    await finishSession(h.db.prisma, s.id, "completed", { finalAnalysis: "done" });
    const first = await ask(s.id, "Why did it fail?", { "X-Forwarded-Email": "dan@example.com" });
    expect(first.status).toBe(202);
    conforms(ChatMessageResponseSchema, first.body);
    await eventually(() =>
      h.received.chatSubmitted.some((m) => m.message_id === first.body.message_id),
    );
    expect(
      h.received.chatSubmitted.find((m) => m.message_id === first.body.message_id),
    ).toMatchObject({
      session_id: s.id,
      chat_id: first.body.chat_id,
      stage_id: first.body.stage_id,
    });

    const busy = await ask<ErrorBody>(s.id, "And now?");
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe("conflict");

    // The orchestrator answers the first question (its stage completes): the next one is accepted.
    const turn = await openChatTurn(h.db.prisma, {
      sessionId: s.id,
      chatId: first.body.chat_id,
      messageId: first.body.message_id,
      stageId: h.received.chatSubmitted.find((m) => m.message_id === first.body.message_id)
        ?.stage_id,
      stageName: "Chat Response",
      agent: { agentName: "ChatAgent" },
    });
    // The stage answering it has the id the POST returned.
    expect(turn.stage.id).toBe(first.body.stage_id);
    await transitionStageStatus(h.db.prisma, turn.stage.id, ["pending"], "completed");
    const second = await ask(s.id, "And now?");
    expect(second.status).toBe(202);
    expect(second.body.chat_id).toBe(first.body.chat_id);

    const detail = await request<SessionDetail>(`${h.url}/api/v1/sessions/${s.id}`);
    conforms(SessionDetailSchema, detail.body);
    expect(detail.body.chat?.created_by).toBe("dan@example.com");
    expect(detail.body.chat?.messages.map((m) => [m.content, m.stage_id])).toEqual([
      ["Why did it fail?", turn.stage.id],
      ["And now?", null],
    ]);

    // A running chat answer can be cancelled even though the session is finished.
    const cancel = await request(`${h.url}/api/v1/sessions/${s.id}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(202);
  });

  it("answers 409 while the session runs or when chat is disabled for its chain", async () => {
    const running = await seedSession(h.db.prisma);
    await startSession(h.db.prisma, running.id);
    const res = await ask<ErrorBody>(running.id, "hello?");
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("in_progress");

    const cancelled = await seedSession(h.db.prisma);
    await finishSession(h.db.prisma, cancelled.id, "cancelled");
    expect((await ask<ErrorBody>(cancelled.id, "hello?")).status).toBe(409);

    const quiet = await seedSession(h.db.prisma, { alertType: "quiet", chainId: "quiet-chain" });
    await finishSession(h.db.prisma, quiet.id, "completed");
    const off = await ask<ErrorBody>(quiet.id, "hello?");
    expect(off.status).toBe(409);
    expect(off.body.error.message).toContain("disabled");
    expect((await getSessionDetail(h.db.prisma, quiet.id))?.chat?.messages.length ?? 0).toBe(0);
  });

  it("answers 400 for empty content, 415 for text bodies, 404 for unknown sessions", async () => {
    const s = await seedSession(h.db.prisma);
    await finishSession(h.db.prisma, s.id, "failed");
    const empty = await ask<{ error: { details: { fields: { path: string }[] } } }>(s.id, "   ");
    expect(empty.status).toBe(400);
    expect(empty.body.error.details.fields.map((f) => f.path)).toEqual(["content"]);
    const text = await request<ErrorBody>(`${h.url}/api/v1/sessions/${s.id}/chat/messages`, {
      method: "POST",
      rawBody: "hi",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
    expect((await ask<ErrorBody>(UNKNOWN, "hi")).status).toBe(404);
  });
});

describe("trace", () => {
  it("lists interactions by stage and execution, and serves both detail levels", async () => {
    const { session, stage, execution, ref } = await seedInvestigation(h.db.prisma);
    const messages = await appendMessages(h.db.prisma, ref, [
      { role: "system", content: "You are an SRE agent." },
      { role: "user", content: "Investigate pod api-1." },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call-1", name: "kubernetes-server__pods_list", arguments: "{}" }],
      },
      { role: "tool", content: "api-1 OOMKilled", toolCallId: "call-1", toolName: "pods_list" },
    ]);
    const iteration = await recordLLMInteraction(h.db.prisma, {
      ...ref,
      interactionType: "iteration",
      modelName: "gemini-2.5-pro",
      iteration: 1,
      lastMessageId: messages[1]?.id ?? null,
      responseText: "",
      toolCalls: [{ id: "call-1", name: "kubernetes-server__pods_list" }],
      inputTokens: 100,
      outputTokens: 10,
      totalTokens: 110,
    });
    const summary = await recordLLMInteraction(h.db.prisma, {
      sessionId: session.id,
      interactionType: "executive_summary",
      modelName: "gemini-2.5-flash",
      llmRequest: {
        messages: [
          { role: "system", content: "Summarize." },
          { role: "user", content: "The pod ran out of memory." },
        ],
      },
      responseText: "OOM in api-1",
    });
    const tool = await recordMCPInteraction(h.db.prisma, {
      ...ref,
      interactionType: "tool_call",
      serverName: "kubernetes-server",
      toolName: "pods_list",
      toolArguments: { namespace: "prod" },
      toolResult: { content: "api-1 OOMKilled" },
      availableTools: [{ name: "pods_list" }],
      durationMs: 42,
    });

    const list = await request<TraceListResponse>(`${h.url}/api/v1/sessions/${session.id}/trace`);
    expect(list.status).toBe(200);
    conforms(TraceListResponseSchema, list.body);
    expect(list.body.stages).toHaveLength(1);
    expect(list.body.stages[0]).toMatchObject({ stage_id: stage.id, stage_name: "investigate" });
    const exec = list.body.stages[0]?.executions[0];
    expect(exec).toMatchObject({ execution_id: execution.id, agent_name: "KubernetesAgent" });
    expect(exec?.llm_interactions.map((i) => i.id)).toEqual([iteration.id]);
    expect(exec?.mcp_interactions.map((i) => [i.id, i.tool_name])).toEqual([
      [tool.id, "pods_list"],
    ]);
    expect(list.body.session_interactions.map((i) => i.id)).toEqual([summary.id]);

    const llm = await request<LLMInteractionDetail>(
      `${h.url}/api/v1/sessions/${session.id}/trace/llm/${iteration.id}`,
    );
    expect(llm.status).toBe(200);
    conforms(LLMInteractionDetailSchema, llm.body);
    expect(llm.body.conversation.map((m) => [m.role, m.content])).toEqual([
      ["system", "You are an SRE agent."],
      ["user", "Investigate pod api-1."],
    ]);
    expect(llm.body).toMatchObject({ model_name: "gemini-2.5-pro", total_tokens: 110 });

    const inline = await request<LLMInteractionDetail>(
      `${h.url}/api/v1/sessions/${session.id}/trace/llm/${summary.id}`,
    );
    conforms(LLMInteractionDetailSchema, inline.body);
    expect(inline.body.conversation.map((m) => m.role)).toEqual(["system", "user"]);

    const mcp = await request<MCPInteractionDetail>(
      `${h.url}/api/v1/sessions/${session.id}/trace/mcp/${tool.id}`,
    );
    expect(mcp.status).toBe(200);
    conforms(MCPInteractionDetailSchema, mcp.body);
    expect(mcp.body).toMatchObject({
      server_name: "kubernetes-server",
      tool_arguments: { namespace: "prod" },
      tool_result: { content: "api-1 OOMKilled" },
      available_tools: [{ name: "pods_list" }],
      duration_ms: 42,
    });

    // An interaction of another session, an unknown one, or the wrong kind: 404.
    const other = await seedSession(h.db.prisma);
    for (const path of [
      `/api/v1/sessions/${other.id}/trace/llm/${iteration.id}`,
      `/api/v1/sessions/${session.id}/trace/llm/${UNKNOWN}`,
      `/api/v1/sessions/${session.id}/trace/mcp/${iteration.id}`,
      `/api/v1/sessions/${UNKNOWN}/trace`,
    ]) {
      const res = await request<ErrorBody>(`${h.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
  });
});
