import { type ForcedConclusionReason, forcedConclusionLabel } from "@tarsy/contracts";
import { fenceUntrusted } from "./untrusted.ts";
/**
 * Prompts of sub-agents: the sections an orchestrating agent's system prompt gains (strategy,
 * the catalog of agents it may dispatch, how results arrive), the focus block and task message
 * of a dispatched sub-agent, and the message that gives the parent a sub-agent's outcome.
 */

export interface CatalogEntry {
  name: string;
  description: string;
  mcpServers: readonly string[];
}

export const ORCHESTRATION_STRATEGY = `## Orchestration

You can delegate work to sub-agents. Each one runs on its own, in parallel with you and the
others, and reports back when it is done.
- Split the investigation into focused, independent tasks and dispatch them early; give each
  sub-agent a precise task with the context it needs (names, namespaces, time window).
- Keep working, or wait: results arrive on their own between your steps.
- React to results: dispatch follow-ups, cancel sub-agents whose work is no longer needed.
- A sub-agent that failed is reported as such; decide yourself whether to retry or go on.
- Your final answer is the investigation's result: combine what the sub-agents found with
  your own findings.`;

/** The agents the orchestrator may dispatch, with what each can use. */
export function subAgentCatalogSection(catalog: readonly CatalogEntry[]): string {
  const lines = catalog.map((agent) => {
    const tools =
      agent.mcpServers.length > 0
        ? `MCP tools: ${agent.mcpServers.join(", ")}`
        : "Tools: none (pure reasoning)";
    return `- **${agent.name}**: ${agent.description}\n  ${tools}`;
  });
  return `## Available Sub-Agents

You can dispatch these agents using the dispatch_agent tool.
Results are delivered automatically when each sub-agent finishes — do not poll.

${lines.join("\n")}`;
}

export const RESULT_DELIVERY = `## Result Delivery

- dispatch_agent answers at once with an execution id and status "accepted": the work has
  only started. Never invent, predict or assume a sub-agent's result.
- When you have nothing else to do while sub-agents are still running, give your answer so
  far; you will be woken with the next result and can continue.
- list_agents shows the sub-agents you dispatched and their status; cancel_agent stops one.`;

/** Appended to a dispatched sub-agent's system prompt. */
export const SUB_AGENT_FOCUS = `## Sub-Agent

You are a sub-agent dispatched by an orchestrator for a specific task.

Rules:
- Focus exclusively on your assigned task — do not investigate unrelated areas.
- Your final response is automatically reported back to the orchestrator.
- Be concise: state what you found, key evidence, and relevant details.
- If you have tools available, use them. If not, use reasoning alone.`;

/** A sub-agent's whole user message: its task. */
export function subAgentTaskMessage(task: string): string {
  return `## Task\n\n${task}`;
}

export interface SubAgentOutcome {
  executionId: string;
  agentName: string;
  status: string;
  finalAnalysis: string | null;
  errorMessage: string | null;
  /** Why a completed sub-agent was made to conclude (null: it concluded by itself). */
  forcedConclusion: ForcedConclusionReason | null;
}

const HEADINGS: Record<string, string> = {
  completed: "Sub-agent completed",
  failed: "Sub-agent failed",
  cancelled: "Sub-agent cancelled",
  timed_out: "Sub-agent timed out",
};

/**
 * How a sub-agent's outcome enters its parent's conversation (a user message, its answer
 * fenced as untrusted data), or the timeline (`fenced: false`: as it was written).
 */
export function subAgentResultMessage(
  outcome: SubAgentOutcome,
  options: { fenced: boolean } = { fenced: true },
): string {
  const base = HEADINGS[outcome.status] ?? `Sub-agent ${outcome.status}`;
  const heading =
    outcome.status === "completed" && outcome.forcedConclusion
      ? `${base} — forced conclusion (${forcedConclusionLabel(outcome.forcedConclusion)})`
      : base;
  const body =
    outcome.status === "completed"
      ? (outcome.finalAnalysis ?? "").trim() || "(no answer)"
      : outcome.errorMessage?.trim() || `the sub-agent ${outcome.status}`;
  const source =
    options.fenced && outcome.status === "completed"
      ? fenceUntrusted("sub_agent_result", body)
      : body;
  return `[${heading}] ${outcome.agentName} (${outcome.executionId}):\n${source}`;
}
