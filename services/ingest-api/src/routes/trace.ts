import { getLLMInteractionDetail, getMCPInteraction, getSession, getSessionTrace } from "@tarsy/db";
import { Hono } from "hono";
import type { IngestResources } from "../deps.ts";
import { notFound } from "../errors.ts";
import { presentLlmItem, presentMcpItem, presentTrace } from "../present.ts";
import { pathId } from "../request.ts";

/** The three trace levels: grouped list, one LLM interaction, one MCP interaction. */
export function traceRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const { prisma } = deps;

  const requireSession = async (id: string) => {
    if (!(await getSession(prisma, id))) throw notFound("session", id);
  };

  app.get("/:id/trace", async (c) => {
    const id = pathId(c, "id", "session");
    await requireSession(id);
    return c.json(presentTrace(await getSessionTrace(prisma, id)));
  });

  app.get("/:id/trace/llm/:interactionId", async (c) => {
    const id = pathId(c, "id", "session");
    const interactionId = pathId(c, "interactionId", "LLM interaction");
    await requireSession(id);
    const detail = await getLLMInteractionDetail(prisma, id, interactionId);
    if (!detail) throw notFound("LLM interaction", interactionId);
    const i = detail.interaction;
    let conversation = detail.conversation.map((m) => ({
      role: m.role,
      content: m.content,
      tool_calls: m.toolCalls ?? null,
      tool_call_id: m.toolCallId,
      tool_name: m.toolName,
    }));
    // Self-contained calls (summarization, executive summary) keep their messages inline.
    if (conversation.length === 0) conversation = inlineConversation(i.llmRequest);
    return c.json({
      ...presentLlmItem(i),
      session_id: i.sessionId,
      stage_id: i.stageId,
      execution_id: i.executionId,
      thinking_content: i.thinkingContent,
      response_text: i.responseText,
      tool_calls: i.toolCalls ?? null,
      response_metadata: i.responseMetadata ?? null,
      llm_request: i.llmRequest ?? null,
      conversation,
    });
  });

  app.get("/:id/trace/mcp/:interactionId", async (c) => {
    const id = pathId(c, "id", "session");
    const interactionId = pathId(c, "interactionId", "MCP interaction");
    await requireSession(id);
    const i = await getMCPInteraction(prisma, id, interactionId);
    if (!i) throw notFound("MCP interaction", interactionId);
    return c.json({
      ...presentMcpItem(i),
      session_id: i.sessionId,
      stage_id: i.stageId,
      execution_id: i.executionId,
      tool_arguments: i.toolArguments ?? null,
      tool_result: i.toolResult ?? null,
      available_tools: i.availableTools ?? null,
    });
  });

  return app;
}

const ROLES = new Set(["system", "user", "assistant", "tool"]);

function inlineConversation(request: unknown) {
  const messages =
    request &&
    typeof request === "object" &&
    Array.isArray((request as { messages?: unknown }).messages)
      ? ((request as { messages: unknown[] }).messages as Record<string, unknown>[])
      : [];
  return messages
    .filter((m) => m && typeof m === "object" && ROLES.has(String(m.role)))
    .map((m) => ({
      role: m.role as "system" | "user" | "assistant" | "tool",
      content: typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""),
      tool_calls: m.tool_calls ?? null,
      tool_call_id: typeof m.tool_call_id === "string" ? m.tool_call_id : null,
      tool_name: typeof m.tool_name === "string" ? m.tool_name : null,
    }));
}
