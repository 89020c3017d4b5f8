import { type FormattableEvent, formatTimelineEvents } from "./timeline-format.ts";

/** One parallel agent's whole investigation, for the synthesis agent. */
export interface AgentInvestigation {
  agentName: string;
  agentIndex: number;
  strategy: string | null;
  llmProvider: string | null;
  status: string;
  errorMessage: string | null;
  events: readonly FormattableEvent[];
}

/** The parallel agents' investigations of one stage, each with its identifying metadata. */
export function formatInvestigationForSynthesis(
  agents: readonly AgentInvestigation[],
  stageName: string,
): string {
  const sections = agents.map((agent) => {
    const header = [
      `## Agent ${agent.agentIndex}: ${agent.agentName}`,
      `- Strategy: ${agent.strategy ?? "default"}`,
      `- LLM provider: ${agent.llmProvider ?? "default"}`,
      `- Status: ${agent.status}`,
      ...(agent.errorMessage ? [`- Error: ${agent.errorMessage}`] : []),
    ].join("\n");
    const body =
      agent.events.length > 0 ? formatTimelineEvents(agent.events) : "(no investigation recorded)";
    return `${header}\n\n${body}`;
  });
  return `# Parallel investigations of stage "${stageName}" (${agents.length} agents)\n\n${sections.join("\n\n---\n\n")}`;
}

/** Where a timeline event belongs, for reading the session as one story. */
export interface PlacedEvent extends FormattableEvent {
  stageId: string | null;
  executionId: string | null;
}

/**
 * The session's events as one readable story: stages in the order they ran, and within a stage
 * of several agents each agent's events together (by agent index), not interleaved in the order
 * the parallel agents happened to write them. `agentIndex` maps execution id → agent index.
 */
export function investigationOrder<E extends PlacedEvent>(
  events: readonly E[],
  agentIndex: ReadonlyMap<string, number>,
): E[] {
  const blocks = new Map<string, E[]>();
  events.forEach((event, position) => {
    const key = event.stageId ?? `event ${position}`;
    const block = blocks.get(key);
    if (block) block.push(event);
    else blocks.set(key, [event]);
  });
  const indexOf = (event: E) => (event.executionId ? (agentIndex.get(event.executionId) ?? 0) : 0);
  return [...blocks.values()].flatMap((block) => block.toSorted((a, b) => indexOf(a) - indexOf(b)));
}

/**
 * The whole session so far (investigation and earlier chat turns), from its timeline, for a
 * follow-up chat question.
 */
export function formatInvestigationContext(events: readonly FormattableEvent[]): string {
  if (events.length === 0) return "(the investigation recorded no timeline)";
  return formatTimelineEvents(events);
}
