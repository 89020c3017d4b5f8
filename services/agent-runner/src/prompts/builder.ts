import type { ConversationMessage } from "@tarsy/llm-client";
import type { ExecutionContext } from "../execution-context.ts";
import { ACTION_TASK, actionInstructions } from "./action.ts";
import { contextSection } from "./calendar.ts";
import { CHAT_INSTRUCTIONS, chatUserMessage } from "./chat.ts";
import { COMPOSE_SYSTEM_PROMPT, composeUserPrompt } from "./compose.ts";
import { alertSection, previousStagesSection, runbookSection } from "./context.ts";
import { customInstructions } from "./custom.ts";
import {
  EXECUTIVE_SUMMARY_SYSTEM_PROMPT,
  executiveSummaryUserPrompt,
  type LabelMapPrompt,
} from "./executive-summary.ts";
import { GENERAL_SRE_INSTRUCTIONS } from "./general.ts";
import { INVESTIGATION_TASK } from "./investigation.ts";
import { mcpServerInstructions, unavailableServersWarning } from "./mcp.ts";
import { preloadedSkillsSection, skillCatalogSection } from "./skills.ts";
import {
  ORCHESTRATION_STRATEGY,
  RESULT_DELIVERY,
  SUB_AGENT_FOCUS,
  subAgentCatalogSection,
  subAgentTaskMessage,
} from "./sub-agents.ts";
import { SYNTHESIS_INSTRUCTIONS, synthesisTask } from "./synthesis.ts";
import { UNTRUSTED_DATA_RULES } from "./untrusted.ts";

const join = (parts: (string | undefined)[]): string =>
  parts.filter((p): p is string => p !== undefined && p.length > 0).join("\n\n");

function identity(ctx: ExecutionContext): string {
  return `You are ${ctx.agentName}, an AI SRE agent of TARSy.`;
}

/** Tier 0: the calendar (UTC time, weekday / weekend / holiday, staffing). */
function calendar(ctx: ExecutionContext): string {
  return contextSection(ctx.now ?? new Date(), ctx.holidays ?? []);
}

/**
 * An orchestrating agent's added sections (strategy, catalog, result delivery), or a
 * sub-agent's focus block; nothing for other agents.
 */
function orchestration(ctx: ExecutionContext): string | undefined {
  if (ctx.subAgent) return SUB_AGENT_FOCUS;
  if (ctx.config.subAgents.length === 0) return undefined;
  return join([
    ORCHESTRATION_STRATEGY,
    subAgentCatalogSection(ctx.config.subAgents),
    RESULT_DELIVERY,
  ]);
}

/**
 * The calendar, then the tiers: general SRE (and the rule on untrusted data) → MCP server instructions → pre-loaded skills →
 * the skill catalog → the agent's custom instructions → orchestration → lessons from past
 * investigations.
 */
export function composeInstructions(ctx: ExecutionContext): string {
  return join([
    calendar(ctx),
    identity(ctx),
    GENERAL_SRE_INSTRUCTIONS,
    UNTRUSTED_DATA_RULES,
    mcpServerInstructions(ctx.config.mcpServers, ctx.mcpInstructions),
    preloadedSkillsSection(ctx.config.requiredSkills),
    skillCatalogSection(ctx.config.onDemandSkills),
    customInstructions(ctx.config.agentName, ctx.config.customInstructions),
    orchestration(ctx),
    ctx.lessons,
    unavailableServersWarning(ctx.failedServers),
  ]);
}

/** Chat: the same tiers, with the chat instructions before the agent's own. */
export function composeChatInstructions(ctx: ExecutionContext): string {
  return join([
    calendar(ctx),
    identity(ctx),
    GENERAL_SRE_INSTRUCTIONS,
    UNTRUSTED_DATA_RULES,
    CHAT_INSTRUCTIONS,
    mcpServerInstructions(ctx.config.mcpServers, ctx.mcpInstructions),
    preloadedSkillsSection(ctx.config.requiredSkills),
    skillCatalogSection(ctx.config.onDemandSkills),
    customInstructions(ctx.config.agentName, ctx.config.customInstructions),
    orchestration(ctx),
    unavailableServersWarning(ctx.failedServers),
  ]);
}

/** The opening [system, user] of an investigation or chat turn (function calling). */
export function buildFunctionCallingMessages(ctx: ExecutionContext): ConversationMessage[] {
  if (ctx.chat) {
    return [
      { role: "system", content: composeChatInstructions(ctx) },
      {
        role: "user",
        content: chatUserMessage(
          ctx.chat.investigationContext,
          ctx.chat.question,
          runbookSection(ctx.runbook),
        ),
      },
    ];
  }
  // A sub-agent: its task is its whole user message.
  if (ctx.subAgent) {
    const instructions = composeInstructions(ctx);
    return [
      {
        role: "system",
        content: ctx.kind === "action" ? actionInstructions(instructions) : instructions,
      },
      { role: "user", content: subAgentTaskMessage(ctx.subAgent.task) },
    ];
  }
  // Action agents: the same tiers plus the safety guidelines, and the action task.
  const action = ctx.kind === "action";
  const instructions = composeInstructions(ctx);
  return [
    { role: "system", content: action ? actionInstructions(instructions) : instructions },
    {
      role: "user",
      content: join([
        alertSection(ctx.alertType, ctx.alertData),
        runbookSection(ctx.runbook),
        previousStagesSection(ctx.previousContext),
        action ? ACTION_TASK : INVESTIGATION_TASK,
      ]),
    },
  ];
}

/** Synthesis: tool-less, the parallel investigations arrive as the context. */
export function buildSynthesisMessages(ctx: ExecutionContext): ConversationMessage[] {
  return [
    {
      role: "system",
      content: join([
        identity(ctx),
        GENERAL_SRE_INSTRUCTIONS,
        UNTRUSTED_DATA_RULES,
        SYNTHESIS_INSTRUCTIONS,
        customInstructions(ctx.config.agentName, ctx.config.customInstructions),
      ]),
    },
    {
      role: "user",
      content: join([
        alertSection(ctx.alertType, ctx.alertData),
        runbookSection(ctx.runbook),
        synthesisTask(ctx.previousContext ?? ""),
      ]),
    },
  ];
}

export function buildExecutiveSummaryMessages(
  finalAnalysis: string,
  labelMap?: LabelMapPrompt,
): ConversationMessage[] {
  return [
    { role: "system", content: EXECUTIVE_SUMMARY_SYSTEM_PROMPT },
    { role: "user", content: executiveSummaryUserPrompt(finalAnalysis, labelMap) },
  ];
}

/** The compose stage's call: the editor's rules, then the two documents (no alert, no runbook). */
export function buildComposeMessages(ctx: ExecutionContext): ConversationMessage[] {
  return [
    {
      role: "system",
      content: join([
        COMPOSE_SYSTEM_PROMPT,
        UNTRUSTED_DATA_RULES,
        customInstructions(ctx.config.agentName, ctx.config.customInstructions),
      ]),
    },
    { role: "user", content: composeUserPrompt(ctx.previousContext ?? "") },
  ];
}
