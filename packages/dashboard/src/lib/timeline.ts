import type {
  StreamChunk,
  TimelineEventCompleted,
  TimelineEventCreated,
  TimelineEventStatus,
  TimelineEventType,
  TimelineResponse,
} from "@tarsy/contracts";

/** One row of the timeline as the dashboard shows it. */
export interface TimelineItem {
  event_id: string;
  stage_id: string | null;
  execution_id: string | null;
  sequence_number: number;
  event_type: TimelineEventType;
  status: TimelineEventStatus;
  content: string;
  metadata: Record<string, unknown> | null;
  timestamp: string;
  /** Times its LLM call was cut and retried while a viewer watched it stream. */
  retries?: number;
}

export interface TimelineState {
  /** Items by event id; `order` lists the ids by sequence number. */
  items: ReadonlyMap<string, TimelineItem>;
  order: readonly string[];
  /** Deltas that arrived before their `timeline_event.created` (chunks travel apart). */
  pendingDeltas: ReadonlyMap<string, string>;
}

export type TimelineAction =
  | { kind: "loaded"; timeline: TimelineResponse }
  | { kind: "created"; event: TimelineEventCreated }
  | { kind: "completed"; event: TimelineEventCompleted }
  | { kind: "chunk"; chunk: StreamChunk }
  | { kind: "reset" };

export const EMPTY_TIMELINE: TimelineState = {
  items: new Map(),
  order: [],
  pendingDeltas: new Map(),
};

const isTerminal = (status: TimelineEventStatus) => status !== "streaming";

const sequenceOf = (items: ReadonlyMap<string, TimelineItem>, id: string): number =>
  items.get(id)?.sequence_number ?? 0;

/** Where a new id goes in `order` (after any equal sequence number): a binary search. */
function insertionPoint(
  order: readonly string[],
  items: ReadonlyMap<string, TimelineItem>,
  sequence: number,
): number {
  let low = 0;
  let high = order.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sequenceOf(items, order[mid] ?? "") <= sequence) low = mid + 1;
    else high = mid;
  }
  return low;
}

function withItem(state: TimelineState, item: TimelineItem): TimelineState {
  const items = new Map(state.items);
  const known = items.has(item.event_id);
  items.set(item.event_id, item);
  if (known) return { ...state, items };
  const order = [...state.order];
  order.splice(insertionPoint(order, items, item.sequence_number), 0, item.event_id);
  return { ...state, items, order };
}

/** The item a REST event becomes, given what the live channel already showed of it. */
function loadedItem(
  e: TimelineResponse["events"][number],
  current: TimelineItem | undefined,
): TimelineItem {
  const streamedMore =
    current && current.status === "streaming" && current.content.length > e.content.length;
  return {
    event_id: e.id,
    stage_id: e.stage_id,
    execution_id: e.execution_id,
    sequence_number: e.sequence_number,
    event_type: e.event_type,
    status: e.status,
    content: streamedMore && e.status === "streaming" ? current.content : e.content,
    metadata: (e.metadata as Record<string, unknown> | null) ?? null,
    timestamp: e.created_at,
  };
}

/**
 * Merges what REST and the live channel say about a session's timeline. Idempotent: the same
 * event seen twice (a REST load overlapping a replay, a catch-up after a reconnect) leaves one
 * row; a terminal event is never reopened by a late `created` or chunk.
 */
export function timelineReducer(state: TimelineState, action: TimelineAction): TimelineState {
  switch (action.kind) {
    case "reset":
      return EMPTY_TIMELINE;
    case "loaded": {
      // One copy of the map and one sort for the whole load, however many events it holds.
      const items = new Map(state.items);
      let added = false;
      for (const e of action.timeline.events) {
        const current = items.get(e.id);
        if (current && isTerminal(current.status)) continue;
        added ||= current === undefined;
        items.set(e.id, loadedItem(e, current));
      }
      if (!added) return { ...state, items };
      const order = [...items.keys()].sort((a, b) => sequenceOf(items, a) - sequenceOf(items, b));
      return { ...state, items, order };
    }
    case "created": {
      const e = action.event;
      if (state.items.has(e.event_id)) return state;
      const pending = state.pendingDeltas.get(e.event_id);
      let next = withItem(state, {
        event_id: e.event_id,
        stage_id: e.stage_id,
        execution_id: e.execution_id,
        sequence_number: e.sequence_number,
        event_type: e.event_type,
        status: e.status,
        content: pending && e.status === "streaming" ? e.content + pending : e.content,
        metadata: e.metadata,
        timestamp: e.timestamp,
      });
      if (pending !== undefined) {
        const pendingDeltas = new Map(next.pendingDeltas);
        pendingDeltas.delete(e.event_id);
        next = { ...next, pendingDeltas };
      }
      return next;
    }
    case "completed": {
      const e = action.event;
      const current = state.items.get(e.event_id);
      const pendingDeltas = new Map(state.pendingDeltas);
      pendingDeltas.delete(e.event_id);
      const base: TimelineItem = current ?? {
        event_id: e.event_id,
        stage_id: e.stage_id,
        execution_id: e.execution_id,
        // Unknown until a REST load tells: sorts after what is known.
        sequence_number: Number.MAX_SAFE_INTEGER,
        event_type: e.event_type,
        status: e.status,
        content: "",
        metadata: null,
        timestamp: e.timestamp,
      };
      return withItem(
        { ...state, pendingDeltas },
        {
          ...base,
          event_type: e.event_type,
          status: e.status,
          content: e.content,
          metadata: e.metadata ? { ...base.metadata, ...e.metadata } : base.metadata,
        },
      );
    }
    case "chunk": {
      // A `reset` chunk voids what was streamed so far (the LLM call is being retried).
      const c = action.chunk;
      const current = state.items.get(c.event_id);
      if (!current) {
        const pendingDeltas = new Map(state.pendingDeltas);
        const before = c.reset ? "" : (pendingDeltas.get(c.event_id) ?? "");
        pendingDeltas.set(c.event_id, before + c.delta);
        return { ...state, pendingDeltas };
      }
      if (isTerminal(current.status)) return state;
      const content = c.reset ? c.delta : current.content + c.delta;
      const retries = (current.retries ?? 0) + (c.reset ? 1 : 0);
      return withItem(state, { ...current, content, ...(retries > 0 && { retries }) });
    }
    default: {
      const unreachable: never = action;
      throw new Error(`unhandled timeline action ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The items in display order. */
export function timelineItems(state: TimelineState): TimelineItem[] {
  const out: TimelineItem[] = [];
  for (const id of state.order) {
    const item = state.items.get(id);
    if (item) out.push(item);
  }
  return out;
}

/** Items grouped by execution (parallel agents side by side), keeping the display order. */
export function groupByExecution(items: readonly TimelineItem[]): Map<string, TimelineItem[]> {
  const groups = new Map<string, TimelineItem[]>();
  for (const item of items) {
    const key = item.execution_id ?? "session";
    const list = groups.get(key);
    if (list) list.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * Sub-agents: each sub-agent execution's parent (the execution that dispatched it), from the
 * session's executions and from the sub-agents' `task_assigned` events, which name the parent
 * and may reach the page before the execution list knows the sub-agent.
 */
export function subAgentParents(
  executions: readonly { id: string; parent_execution_id: string | null }[],
  items: readonly TimelineItem[],
): Map<string, string> {
  const parents = new Map<string, string>();
  for (const e of executions) if (e.parent_execution_id) parents.set(e.id, e.parent_execution_id);
  for (const item of items) {
    const parent = item.metadata?.parent_execution_id;
    if (item.event_type === "task_assigned" && item.execution_id && typeof parent === "string")
      if (!parents.has(item.execution_id)) parents.set(item.execution_id, parent);
  }
  return parents;
}

/**
 * The sub-agent a parent's `dispatch_agent` tool call started: the execution id its result
 * names (`{"execution_id": …, "status": "accepted"}`), or null (another tool, a refused
 * dispatch, a call still running).
 */
export function dispatchedExecutionId(item: TimelineItem): string | null {
  if (item.event_type !== "llm_tool_call") return null;
  const meta = item.metadata ?? {};
  if ((meta.tool_name ?? meta.tool) !== "dispatch_agent" || meta.server_name || meta.is_error)
    return null;
  try {
    const parsed: unknown = JSON.parse(item.content);
    const id = (parsed as { execution_id?: unknown } | null)?.execution_id;
    return typeof id === "string" && id ? id : null;
  } catch {
    return /"execution_id"\s*:\s*"([^"]+)"/.exec(item.content)?.[1] ?? null;
  }
}

/**
 * What a `sub_agent_result` event says without its first line (`[Sub-agent completed]
 * LogAgent (<id>):`), which the page shows as the agent's name and a status chip instead.
 */
export function subAgentResultText(content: string): string {
  const m = /^\[Sub-agent [^\]]*\] [^\n]*\):\n/.exec(content);
  return m ? content.slice(m[0].length) : content;
}
