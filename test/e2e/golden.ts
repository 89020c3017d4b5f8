/**
 * Golden files of a whole investigation: what a run produced, with everything that differs
 * from run to run replaced by a stable placeholder, so two runs of the same script compare
 * equal and any change in what TARSy does shows up as a diff.
 *
 * - ids become names of what they identify (`<stage 2. deep-dive>`, `<exec 2. deep-dive /
 *   LogAgent>`, `<llm 1. triage / DemoInvestigator #3>`); an id nobody named is `<uuid>`;
 * - generated times (ISO with milliseconds) become `<time>`, durations `<ms>`; the calendar
 *   context of system prompts (time, day, staffing) becomes placeholders;
 * - interleaving of parallel executions is taken out by grouping by execution (each group in
 *   its own order) and dropping the session-wide sequence numbers.
 *
 * Files are compared with vitest's `toMatchFileSnapshot`; `vitest run -u` rewrites them.
 */
import type {
  LLMInteractionDetail,
  MCPInteractionDetail,
  SessionDetail,
  TimelineResponse,
  TraceListResponse,
  WsServerFrame,
} from "@tarsy/contracts";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const GENERATED_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(?:Z|[+-]\d\d:\d\d)/g;
/** The calendar context that opens system prompts: the time and day of the run. */
const PROMPT_CALENDAR: [RegExp, string][] = [
  [/Current time: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\w+\)/g, "Current time: <time> (<weekday>)"],
  [
    /Calendar context \(UTC\): \d{4}-\d\d-\d\d — \w+ — [^\n]+/g,
    "Calendar context (UTC): <calendar>",
  ],
  [/Staffing: (?:normal|reduced)/g, "Staffing: <staffing>"],
];
/** Keys whose values differ per run however deterministic the script is. */
const VOLATILE_NUMBERS = new Set(["duration_ms"]);
const DROPPED = new Set(["sequence_number"]);

export class GoldenNormalizer {
  private readonly names = new Map<string, string>();
  private readonly counters = new Map<string, number>();
  private readonly literals: [string, string][] = [];

  /** Names an id; the first name given wins. */
  name(id: string | null | undefined, what: string): void {
    if (id && !this.names.has(id.toLowerCase())) this.names.set(id.toLowerCase(), `<${what}>`);
  }

  /** Names an id as the next of a numbered series (`<llm … #1>`, `<llm … #2>`). */
  nameNext(id: string, series: string): void {
    const n = (this.counters.get(series) ?? 0) + 1;
    this.counters.set(series, n);
    this.name(id, `${series} #${n}`);
  }

  /** Replaces a literal string (a temporary path, a port) wherever it appears. */
  replaceLiteral(literal: string, placeholder: string): void {
    this.literals.push([literal, placeholder]);
  }

  nameOf(id: string | null | undefined): string | undefined {
    return id ? this.names.get(id.toLowerCase()) : undefined;
  }

  normalize(value: unknown, key = ""): unknown {
    if (typeof value === "string") return this.text(value);
    if (typeof value === "number" && VOLATILE_NUMBERS.has(key)) return "<ms>";
    if (Array.isArray(value)) return value.map((v) => this.normalize(v));
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (DROPPED.has(k)) continue;
        out[k] = this.normalize(v, k);
      }
      return out;
    }
    return value;
  }

  private text(value: string): string {
    let out = value;
    for (const [literal, placeholder] of this.literals) out = out.split(literal).join(placeholder);
    for (const [pattern, placeholder] of PROMPT_CALENDAR) out = out.replace(pattern, placeholder);
    return out
      .replace(UUID, (id) => this.names.get(id.toLowerCase()) ?? "<uuid>")
      .replace(GENERATED_TIME, "<time>");
  }
}

/** Stable JSON text for a golden file. */
export function goldenJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

type Api = <T>(path: string) => Promise<{ status: number; body: T }>;

/** The golden documents of one session: the four data layers, grouped per execution. */
export interface GoldenSession {
  "session.json": unknown;
  "timeline.json": unknown;
  "websocket.json": unknown;
  "llm-interactions.json": unknown;
  "mcp-interactions.json": unknown;
}

/**
 * Reads a finished session through the API (detail, timeline, trace and every interaction)
 * and the frames a WebSocket client received on `session:<id>` and `sessions`, and returns
 * them normalized.
 */
export async function goldenSession(
  api: Api,
  sessionId: string,
  frames: readonly WsServerFrame[],
  literals: Record<string, string> = {},
): Promise<GoldenSession> {
  const g = new GoldenNormalizer();
  for (const [literal, placeholder] of Object.entries(literals)) {
    g.replaceLiteral(literal, placeholder);
  }
  g.name(sessionId, "session");
  const detail = (await api<SessionDetail>(`/api/v1/sessions/${sessionId}`)).body;
  const groups = new Map<string, string>(); // execution id (or "session") → group label
  // Groups appear in the session's order (parallel agents finish in any order).
  const order = ["session"];
  for (const stage of detail.stages) {
    const stageLabel = `${stage.stage_index}. ${stage.stage_name}`;
    g.name(stage.id, `stage ${stageLabel}`);
    for (const exec of stage.executions) {
      const label = `${stageLabel} / ${exec.agent_name}`;
      g.name(exec.id, `exec ${label}`);
      groups.set(exec.id, label);
      order.push(label);
    }
  }
  if (detail.chat) {
    g.name(detail.chat.id, "chat");
    for (const [i, m] of detail.chat.messages.entries()) g.name(m.id, `chat message ${i + 1}`);
  }
  const groupOf = (executionId: string | null) =>
    (executionId && groups.get(executionId)) ?? "session";

  const timeline = (await api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`)).body;
  for (const event of timeline.events) g.nameNext(event.id, `event ${groupOf(event.execution_id)}`);
  const timelineGroups = ordered(
    groupBy(timeline.events, (e) => groupOf(e.execution_id)),
    order,
  );

  const trace = (await api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`)).body;
  const llm: Record<string, unknown[]> = {};
  const mcp: Record<string, unknown[]> = {};
  const executions = [
    ...trace.stages.flatMap((s) => s.executions),
    { execution_id: null, llm_interactions: trace.session_interactions, mcp_interactions: [] },
  ];
  for (const exec of executions) {
    const label = groupOf(exec.execution_id);
    for (const item of exec.llm_interactions) {
      g.nameNext(item.id, `llm ${label}`);
      const path = `/api/v1/sessions/${sessionId}/trace/llm/${item.id}`;
      append(llm, label, (await api<LLMInteractionDetail>(path)).body);
    }
    for (const item of exec.mcp_interactions) {
      g.nameNext(item.id, `mcp ${label}`);
      const path = `/api/v1/sessions/${sessionId}/trace/mcp/${item.id}`;
      append(mcp, label, (await api<MCPInteractionDetail>(path)).body);
    }
  }

  // Persistent events only (stream chunks are live-only); the event id is the stream position.
  const persistent = frames.flatMap((f) => ("id" in f && "payload" in f ? [f] : []));
  const onSession = persistent.filter((f) => f.channel === `session:${sessionId}`);
  const onList = persistent.filter(
    (f) => f.channel === "sessions" && f.payload.session_id === sessionId,
  );
  const websocket = {
    "session:<session>": ordered(
      groupBy(
        onSession.map((f) => f.payload),
        (p) => groupOf("execution_id" in p ? (p.execution_id ?? null) : null),
      ),
      order,
    ),
    sessions: onList.map((f) => f.payload),
  };

  return {
    "session.json": g.normalize(detail),
    "timeline.json": g.normalize(timelineGroups),
    "websocket.json": g.normalize(websocket),
    "llm-interactions.json": g.normalize(ordered(llm, order)),
    "mcp-interactions.json": g.normalize(ordered(mcp, order)),
  };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Record<string, T[]> {
  const out: Record<string, T[]> = {};
  for (const item of items) append(out, key(item), item);
  return out;
}

function append<T>(record: Record<string, T[]>, key: string, item: T): void {
  const list = record[key];
  if (list) list.push(item);
  else record[key] = [item];
}

/** The same record with its keys in the given order. */
function ordered<T>(record: Record<string, T>, order: readonly string[]): Record<string, T> {
  const rank = (key: string) => (order.includes(key) ? order.indexOf(key) : order.length);
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => rank(a) - rank(b)));
}
