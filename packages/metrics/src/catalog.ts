/**
 * Every TARSy metric, declared once: the table "Metrics" of docs/operations.md as code (a test
 * checks the two agree). `from` says which processes register it, so a service's metrics
 * object has exactly the metrics the table assigns to it.
 */

export const SERVICE_NAMES = [
  "orchestrator",
  "agent-runner",
  "mcp-gateway",
  "llm-service",
  "ingest-api",
  "stream-relay",
  "notifier",
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export type MetricType = "counter" | "gauge" | "histogram";

export interface MetricDef {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labels: readonly string[];
  readonly from: readonly ServiceName[];
  /** Histogram buckets, in seconds. */
  readonly buckets?: readonly number[];
  /**
   * `cluster`: a gauge every replica reads from shared state (Postgres, JetStream) and reports
   * alike; aggregate it with `max`, never `sum` (that counts it once per replica).
   */
  readonly scope?: "cluster";
}

/** Whole sessions: queue to answer takes seconds to many minutes. */
const SESSION_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600];
/** Stages and executions: one or a few LLM loops. */
const STEP_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
/** One LLM request (streamed to its end). */
const LLM_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];
/** One MCP tool call. */
const MCP_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 90];

export const METRICS = {
  sessions: {
    name: "tarsy_sessions_total",
    type: "counter",
    help: "Sessions that ended, by terminal status (completed, failed, cancelled, timed_out).",
    labels: ["status"],
    from: ["orchestrator"],
  },
  sessionDuration: {
    name: "tarsy_session_duration_seconds",
    type: "histogram",
    help: "Time from a session's start (admission; submission when it never started) to its end.",
    labels: ["status"],
    from: ["orchestrator"],
    buckets: SESSION_BUCKETS,
  },
  sessionsActive: {
    name: "tarsy_sessions_active",
    type: "gauge",
    help: "Sessions running now over all replicas (read from Postgres at scrape; every replica reports the same).",
    labels: [],
    from: ["orchestrator"],
    scope: "cluster",
  },
  stageDuration: {
    name: "tarsy_stage_duration_seconds",
    type: "histogram",
    help: "Time from a stage's start to its end, by terminal status.",
    labels: ["status"],
    from: ["orchestrator"],
    buckets: STEP_BUCKETS,
  },
  executionDuration: {
    name: "tarsy_execution_duration_seconds",
    type: "histogram",
    help: "Time one agent execution attempt ran in a runner, by agent and outcome.",
    labels: ["agent", "status"],
    from: ["agent-runner"],
    buckets: STEP_BUCKETS,
  },
  llmRequests: {
    name: "tarsy_llm_requests_total",
    type: "counter",
    help: "LLM requests sent to llm-service, by provider type, model and outcome (ok, error, timeout, aborted; retried: an attempt cut by an llm-service restart or stall, retried).",
    labels: ["provider", "model", "status"],
    from: ["agent-runner"],
  },
  sessionLabelsParseFailures: {
    name: "tarsy_session_labels_parse_failures_total",
    type: "counter",
    help: "Executive summaries whose LABELS line could not be read even after one reminder; the session keeps no labels (null), by the label map in use.",
    labels: ["label_map"],
    from: ["agent-runner"],
  },
  llmFallbacks: {
    name: "tarsy_llm_fallbacks_total",
    type: "counter",
    help: "Provider fallbacks: an execution switched from one configured LLM provider to the next in its fallback_providers list, by the providers and the trigger (immediate, provider_errors, partial_stream).",
    labels: ["from_provider", "to_provider", "trigger"],
    from: ["agent-runner"],
  },
  llmRequestDuration: {
    name: "tarsy_llm_request_duration_seconds",
    type: "histogram",
    help: "Time from sending an LLM request to the end of its streamed answer.",
    labels: ["provider", "model"],
    from: ["agent-runner"],
    buckets: LLM_BUCKETS,
  },
  llmTokens: {
    name: "tarsy_llm_tokens_total",
    type: "counter",
    help: "Tokens the providers reported, by kind (input: uncached, output, thinking, cache_read, cache_creation).",
    labels: ["provider", "model", "kind"],
    from: ["agent-runner"],
  },
  llmErrors: {
    name: "tarsy_llm_errors_total",
    type: "counter",
    help: "Generate requests that failed in llm-service, by provider type, model and error code.",
    labels: ["provider", "model", "code"],
    from: ["llm-service"],
  },
  llmEmbeddings: {
    name: "tarsy_llm_embeddings_total",
    type: "counter",
    help: "Embed requests llm-service answered, by provider type and outcome (ok, or the error code: invalid_argument, rate_limited, provider_unavailable, auth, invalid_config, invalid_request, wrong_dimensions, cancelled …).",
    labels: ["provider", "outcome"],
    from: ["llm-service"],
  },
  mcpCalls: {
    name: "tarsy_mcp_calls_total",
    type: "counter",
    help: "MCP tool calls, by server, tool and outcome (ok, error).",
    labels: ["server", "tool", "status"],
    from: ["mcp-gateway"],
  },
  mcpCallDuration: {
    name: "tarsy_mcp_call_duration_seconds",
    type: "histogram",
    help: "Time of one MCP tool call, retries and masking included.",
    labels: ["server", "tool"],
    from: ["mcp-gateway"],
    buckets: MCP_BUCKETS,
  },
  mcpErrors: {
    name: "tarsy_mcp_errors_total",
    type: "counter",
    help: "MCP tool calls that failed, by server, tool and error code.",
    labels: ["server", "tool", "code"],
    from: ["mcp-gateway"],
  },
  mcpWarmPoolTakes: {
    name: "tarsy_mcp_warm_pool_takes_total",
    type: "counter",
    help: "MCP sessions an execution opened, by server and whether a warm one was ready (warm) or it had to start one (cold).",
    labels: ["server", "result"],
    from: ["mcp-gateway"],
  },
  maskingRedactions: {
    name: "tarsy_masking_redactions_total",
    type: "counter",
    help: "Values replaced by data masking, by pattern.",
    labels: ["pattern"],
    from: ["mcp-gateway", "ingest-api"],
  },
  workBacklog: {
    name: "tarsy_work_backlog_messages",
    type: "gauge",
    help: "Work messages of a consumer not yet acknowledged, waiting or in flight (read from JetStream at scrape).",
    labels: ["consumer"],
    from: ["orchestrator", "agent-runner"],
    scope: "cluster",
  },
  workRedeliveries: {
    name: "tarsy_work_redeliveries_total",
    type: "counter",
    help: "Work messages delivered again after a failure, a hand-back or a lost acknowledgement.",
    labels: ["consumer"],
    from: ["orchestrator", "agent-runner", "notifier"],
  },
  deadLetters: {
    name: "tarsy_dead_letters_total",
    type: "counter",
    help: "Messages of a durable consumer (work, or the notifier's events) moved to the dead-letter stream.",
    labels: ["consumer"],
    from: ["orchestrator", "agent-runner", "notifier"],
  },
  workOrphaned: {
    name: "tarsy_work_orphaned_total",
    type: "counter",
    help: "Valid work messages naming a session, execution, stage or chat message that does not exist; acknowledged and dropped.",
    labels: ["kind", "missing"],
    from: ["orchestrator", "agent-runner"],
  },
  actionStageOutcomes: {
    name: "tarsy_action_stage_outcomes_total",
    type: "counter",
    help: "Action stages that ended, by outcome (acted, no_action, unknown: an agent gave no YES/NO line, failed: the stage did not complete).",
    labels: ["outcome"],
    from: ["orchestrator"],
  },
  userTokensWiped: {
    name: "tarsy_user_tokens_wiped_total",
    type: "counter",
    help: "Users' tokens (per-user MCP credentials) the janitor wiped once expired, by what held them (session, chat_message).",
    labels: ["holder"],
    from: ["orchestrator"],
  },
  retentionRuns: {
    name: "tarsy_retention_runs_total",
    type: "counter",
    help: "Rounds of the retention job, by outcome (ran; skipped: another replica held the lock; failed).",
    labels: ["outcome"],
    from: ["orchestrator"],
  },
  retentionSessionsDeleted: {
    name: "tarsy_retention_sessions_deleted_total",
    type: "counter",
    help: "Sessions the retention job deleted, by phase (soft: past retention; hard: erased after the grace period).",
    labels: ["phase"],
    from: ["orchestrator"],
  },
  retentionOutboxPurged: {
    name: "tarsy_retention_outbox_purged_total",
    type: "counter",
    help: "Published outbox rows the retention job purged.",
    labels: [],
    from: ["orchestrator"],
  },
  eventsPublished: {
    name: "tarsy_events_published_total",
    type: "counter",
    help: "Dashboard events published (stored events and stream chunks), by event type.",
    labels: ["kind"],
    from: ["orchestrator", "agent-runner", "ingest-api"],
  },
  wsConnections: {
    name: "tarsy_ws_connections",
    type: "gauge",
    help: "WebSocket clients connected now.",
    labels: [],
    from: ["stream-relay"],
  },
  wsFramesSent: {
    name: "tarsy_ws_frames_sent_total",
    type: "counter",
    help: "WebSocket frames sent to clients, by frame type.",
    labels: ["type"],
    from: ["stream-relay"],
  },
  wsUpgradesRejected: {
    name: "tarsy_ws_upgrades_rejected_total",
    type: "counter",
    help: "WebSocket upgrades refused: a foreign origin, or a caller who could not be identified (by reason).",
    labels: ["reason"],
    from: ["stream-relay"],
  },
  wsFramesFiltered: {
    name: "tarsy_ws_frames_filtered_total",
    type: "counter",
    help: "Frames about a session withheld from a client: not allowed to see it, or the session's project unknown.",
    labels: ["reason"],
    from: ["stream-relay"],
  },
  alertsReceived: {
    name: "tarsy_alerts_received_total",
    type: "counter",
    help: "Alerts received, by source (api, alertmanager) and outcome (accepted, skipped, rejected, failed).",
    labels: ["source", "status"],
    from: ["ingest-api"],
  },
  actionRequests: {
    name: "tarsy_action_requests_total",
    type: "counter",
    help: "Action requests (action agents' mutating calls) by step: requested, approved, denied, expired (nobody decided in time: a denial) or cancelled (its execution ended first), and by the agent's approval mode (required, auto).",
    labels: ["event", "mode"],
    from: ["agent-runner", "ingest-api", "orchestrator"],
  },
  actionDecisionDuration: {
    name: "tarsy_action_decision_seconds",
    type: "histogram",
    help: "Time from an action request to a person's decision or its timeout, by decision (approved, denied, expired, cancelled). Requests approved by `approval: auto` are not timed.",
    labels: ["decision"],
    from: ["ingest-api", "orchestrator"],
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200],
  },
  notifications: {
    name: "tarsy_notifications_total",
    type: "counter",
    help: "Notification sends by target kind (slack, webhook), event and outcome: sent, retry (failed, tried again later), failed (given up), found (a send cut short by a crash had happened).",
    labels: ["target", "event", "outcome"],
    from: ["notifier"],
  },
  notificationDuration: {
    name: "tarsy_notification_send_duration_seconds",
    type: "histogram",
    help: "Time one notification attempt took (thread lookup and post), by target kind.",
    labels: ["target"],
    from: ["notifier"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
} as const satisfies Record<string, MetricDef>;

export type MetricKey = keyof typeof METRICS;

/** Keys of the metrics the table assigns to `S`. */
export type MetricKeyOf<S extends ServiceName> = {
  [K in MetricKey]: S extends (typeof METRICS)[K]["from"][number] ? K : never;
}[MetricKey];

/** Label names of one metric. */
export type LabelOf<K extends MetricKey> = (typeof METRICS)[K]["labels"][number];
