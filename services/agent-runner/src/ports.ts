import type {
  ExecutionKind,
  FailureTag,
  ForcedConclusionReason,
  LLMInteractionType,
  MessageRole,
  TimelineEventStatus,
  TimelineEventType,
  TokenUsage,
} from "@tarsy/contracts";
import type {
  AppliedFeedbackReflection,
  FeedbackReflectionChanges,
  InvestigationMemory,
  MemoryScope,
  MemorySearch,
  NewMemory,
  PastSession,
  PastSessionSearch,
  ScoredMemory,
} from "@tarsy/db";
import type { ReasoningContinuity } from "@tarsy/llm-client";
import type { ResumePlan } from "./resume.ts";

/**
 * The runner's dependencies, each as a small interface: controllers and the execution
 * lifecycle talk only to these, main.ts wires the real implementations (Postgres, NATS).
 */

export interface TimelineEventRecord {
  id: string;
  sessionId: string;
  stageId: string | null;
  executionId: string | null;
  sequenceNumber: number;
  eventType: TimelineEventType;
  status: TimelineEventStatus;
  content: string;
  metadata: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewTimelineEvent {
  sessionId: string;
  stageId: string | null;
  executionId: string | null;
  eventType: TimelineEventType;
  status: TimelineEventStatus;
  content: string;
  metadata: Record<string, unknown> | null;
}

export interface StoredToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface NewMessage {
  sessionId: string;
  stageId: string | null;
  executionId: string;
  role: MessageRole;
  content: string;
  toolCalls?: StoredToolCall[];
  toolCallId?: string;
  toolName?: string;
  /** Assistant messages: opaque reasoning-continuity data, sent back to the provider. */
  continuity?: ReasoningContinuity;
}

export interface NewLlmInteraction {
  sessionId: string;
  stageId: string | null;
  executionId: string | null;
  interactionType: LLMInteractionType;
  modelName: string;
  provider: string;
  iteration: number | null;
  lastMessageId: string | null;
  llmRequest: Record<string, unknown>;
  responseText: string | null;
  thinkingContent: string | null;
  toolCalls: StoredToolCall[] | null;
  responseMetadata: Record<string, unknown> | null;
  usage: TokenUsage | null;
  /** The reasoning effort sent with the call (null: the provider's default). */
  reasoningEffort: string | null;
  durationMs: number;
  errorMessage: string | null;
}

export interface NewMcpInteraction {
  sessionId: string;
  stageId: string | null;
  executionId: string | null;
  interactionType: "tool_call" | "tool_list";
  serverName: string;
  toolName: string | null;
  toolArguments: Record<string, unknown> | null;
  toolResult: Record<string, unknown> | null;
  availableTools: unknown[] | null;
  durationMs: number;
  errorMessage: string | null;
}

/** The runbook a session runs with, as stored on it (see `claimSessionRunbook`). */
export interface SessionRunbookRecord {
  /** Null: no runbook text ("No runbook available."). */
  content: string | null;
  source: "fetched" | "default" | "none";
  /** Why the session fell back from its runbook URL. */
  error: string | null;
}

/** What the runner reads about an execution before it starts. */
export interface ExecutionRecord {
  id: string;
  sessionId: string;
  stageId: string | null;
  kind: ExecutionKind;
  agentName: string;
  agentIndex: number;
  status: "pending" | "active" | "completed" | "failed" | "cancelled" | "timed_out";
  attempt: number;
  /** Parked until one of its sub-agents ends or an action is decided (packages/db). */
  suspended: boolean;
  /** It parked at least once (it has a resume request): only resume deliveries run it. */
  parked: boolean;
  finalAnalysis: string | null;
  actionsExecuted: boolean | null;
  forcedConclusion: ForcedConclusionReason | null;
  /** Executive summaries: their labels as stored (null: unreadable, or another kind). */
  labels: string[] | null;
  errorMessage: string | null;
  usage: TokenUsage;
  /** When the execution was created (its stage opened, its parent dispatched it, its turn began). */
  createdAt: Date;
  completedAt: Date | null;
  session: {
    alertData: string;
    alertType: string;
    chainId: string;
    /** The authorization boundary; memories never cross it. */
    project: string;
    runbookUrl: string | null;
    /** Null until the first execution of the session resolved it. */
    runbook: SessionRunbookRecord | null;
    mcpSelection: unknown;
  };
  stage: { name: string; index: number } | null;
  /** Sub-agents: the task their parent gave them, and the parent. */
  task: string | null;
  parent: { id: string; kind: ExecutionKind; agentIndex: number } | null;
}

export interface ExecutionOutcome {
  status: "completed" | "failed" | "cancelled" | "timed_out";
  finalAnalysis: string | null;
  /** Action agents: whether they said they acted (null when unknown); absent elsewhere. */
  actionsExecuted?: boolean | null;
  /** Executive summaries: the labels of their `LABELS:` line (null: unreadable); absent elsewhere. */
  labels?: string[] | null;
  /** Iterating agents made to conclude: why; absent when they concluded by themselves. */
  forcedConclusion?: ForcedConclusionReason;
  error: string | null;
  usage: TokenUsage;
}

/** What the scoring judge concluded (`session_scores`). */
export interface ScoreResult {
  totalScore: number;
  scoreAnalysis: string;
  toolImprovementReport: string;
  failureTags: readonly FailureTag[];
  promptHash: string;
}

/** Postgres in production; every write is progressive (as the loop goes). */
export interface RunnerStore {
  /** Allocates the session-wide sequence number and inserts the event. */
  createTimelineEvent(event: NewTimelineEvent): Promise<TimelineEventRecord>;
  /** Ends a streaming event; null when it was not streaming any more. */
  completeTimelineEvent(
    id: string,
    update: {
      eventType?: TimelineEventType;
      status: Exclude<TimelineEventStatus, "streaming">;
      content: string;
      metadata: Record<string, unknown> | null;
    },
  ): Promise<TimelineEventRecord | null>;
  /**
   * Appends messages in order (one transaction); returns their ids. Sub-agent outcomes the
   * messages carry are marked delivered in the same transaction.
   */
  appendMessages(
    messages: NewMessage[],
    deliveredSubAgentIds?: readonly string[],
  ): Promise<string[]>;
  recordLlmInteraction(interaction: NewLlmInteraction): Promise<void>;
  /** The execution moved to a fallback provider: the current one, with the original kept. */
  recordProviderFallback(
    executionId: string,
    change: {
      originalProvider: string;
      originalBackend: string;
      originalReasoningEffort: string | null;
      provider: string;
      backend: string;
      reasoningEffort: string | null;
    },
  ): Promise<void>;
  /** The reasoning effort an attempt starts with (its configured provider's). */
  recordReasoningEffort(executionId: string, reasoningEffort: string | null): Promise<void>;
  recordMcpInteraction(interaction: NewMcpInteraction): Promise<void>;
  /** The judge's result, on the scoring run of `stageId` (while it is in progress). */
  recordScoreResult(stageId: string, result: ScoreResult): Promise<void>;
  /** Investigation memory (#24): search, record and maintain a project's memories. */
  memories: MemoryStore;

  loadExecution(executionId: string): Promise<ExecutionRecord | null>;
  /**
   * Stores the session's runbook unless one is stored already; returns the stored one and
   * whether this call stored it (first writer wins across executions and runners).
   */
  claimSessionRunbook(
    sessionId: string,
    runbook: SessionRunbookRecord,
  ): Promise<{ runbook: SessionRunbookRecord; claimed: boolean }>;
  /**
   * Marks the execution active for this attempt (null when it is already terminal). Work of
   * an earlier, interrupted attempt is cleaned up: its conversation is dropped (the loop
   * restarts) and the events it left streaming are failed and returned.
   */
  startAttempt(
    executionId: string,
    runnerId: string,
    options?: {
      /** A suspended parent woken by its sub-agents: its conversation goes on. */
      resume?: boolean;
      /** After an interrupted attempt, continue its conversation when it can be continued. */
      resumeInterrupted?: boolean;
    },
  ): Promise<StartedAttempt | null>;
  /** Sub-agents of a parent execution. */
  subAgents: SubAgentStore;
  /** Action requests: action agents' mutating calls (packages/db actions.ts). */
  actions: ActionStore;
  /** Marks the attempt alive; false when a newer attempt owns the execution (or it ended). */
  heartbeat(executionId: string, attempt: number): Promise<boolean>;
  /**
   * Stores the outcome if this attempt still owns the execution (a newer attempt, after a
   * redelivery, takes it over). Returns whether it was stored.
   */
  finishExecution(
    executionId: string,
    attempt: number,
    outcome: ExecutionOutcome,
  ): Promise<boolean>;
}

export interface StartedAttempt {
  attempt: number;
  /** Events an interrupted earlier attempt left streaming, now ended. */
  interrupted: TimelineEventRecord[];
  /**
   * A resumption: the stored conversation it continues. Absent when the attempt starts over
   * (its earlier conversation dropped, its earlier sub-agents abandoned).
   */
  conversation?: StoredMessage[];
  /** Sub-agents of a restarted parent's earlier attempt, ended now (their runners are told). */
  abandoned: SubAgentRecord[];
  /**
   * After an interrupted attempt: how this one goes on from it. `resumed` continues its stored
   * conversation (`conversation` is set) with the tokens its LLM calls used so far; `restarted`
   * starts over, because the conversation could not be continued (`reason`).
   */
  recovery?:
    | { mode: "resumed"; plan: Extract<ResumePlan, { resumable: true }>; usage: TokenUsage }
    | { mode: "restarted"; reason: string };
}

export interface StoredMessage {
  id: string;
  role: MessageRole;
  content: string;
  toolCalls: StoredToolCall[] | null;
  toolCallId: string | null;
  toolName: string | null;
  continuity: ReasoningContinuity | null;
}

export interface SubAgentRecord {
  id: string;
  sessionId: string;
  stageId: string | null;
  agentName: string;
  agentIndex: number;
  kind: ExecutionKind;
  status: ExecutionRecord["status"];
  task: string | null;
  finalAnalysis: string | null;
  errorMessage: string | null;
  forcedConclusion: ForcedConclusionReason | null;
  createdAt: Date;
  completedAt: Date | null;
}

export type SubAgentDispatchResult =
  | { status: "created" | "existing"; subAgent: SubAgentRecord }
  | { status: "refused"; reason: string };

/** Sub-agent rows and a parent's suspension (packages/db sub-agents.ts). */
export interface SubAgentStore {
  dispatch(input: {
    parentExecutionId: string;
    agentName: string;
    kind: ExecutionKind;
    task: string;
    dispatchKey: string;
    maxConcurrent: number;
  }): Promise<SubAgentDispatchResult>;
  list(parentExecutionId: string): Promise<SubAgentRecord[]>;
  /** Ended sub-agents whose outcome the parent has not been given. */
  undelivered(parentExecutionId: string): Promise<SubAgentRecord[]>;
  /** Ends unfinished ones (all, or `only`) as cancelled with `reason`; returns those it ended. */
  cancel(
    parentExecutionId: string,
    reason: string,
    only?: readonly string[],
  ): Promise<SubAgentRecord[]>;
  /** Parks the parent until a sub-agent ends (see `suspendExecution` in packages/db). */
  suspend(
    executionId: string,
    attempt: number,
    resumeRequest: Record<string, unknown>,
    usage: TokenUsage,
  ): Promise<"suspended" | "results_ready" | "nothing_pending" | "not_owned">;
  /**
   * Takes a suspended execution out of suspension itself: false when it was not suspended
   * any more (something else woke it, and its resume request is on its way).
   */
  wake(executionId: string): Promise<boolean>;
}

/** A mutating call's request as the runner reads it. */
export interface ActionRecord {
  id: string;
  status: "pending" | "approved" | "denied" | "expired" | "cancelled";
  callStatus: "not_started" | "started" | "succeeded" | "failed" | "unknown";
  decidedBy: string | null;
  comment: string | null;
  result: string | null;
}

export interface NewAction {
  sessionId: string;
  stageId: string | null;
  executionId: string;
  agentName: string;
  toolCallId: string;
  server: string;
  tool: string;
  rawArguments: string;
  /** Parsed and masked. */
  arguments: Record<string, unknown>;
  /** Masked. */
  reason: string;
  approvalMode: "required" | "auto";
  expiresAt: Date | null;
  /** The call's dry-run form's outcome (masked), when the tool has one. */
  dryRun?: { status: "succeeded" | "failed"; result: string } | null;
}

/** Action requests and the parking of an execution that waits for one. */
export interface ActionStore {
  /**
   * The call's request, created once (its events are published); `created` is false when the
   * call had its request already (a resumed or repeated attempt).
   */
  request(input: NewAction): Promise<{ action: ActionRecord; created: boolean }>;
  /** Parks the execution until the request is decided ("decided": it already was). */
  suspend(input: {
    executionId: string;
    attempt: number;
    actionId: string;
    resumeRequest: Record<string, unknown>;
    usage: TokenUsage;
  }): Promise<"suspended" | "decided" | "not_owned">;
  /** The request of one call (by its tool call id), or by its own id when given. */
  find(executionId: string, toolCallId: string, id?: string): Promise<ActionRecord | null>;
  /** A call that started and never ended: its outcome is unknown (never repeated). */
  markOutcomeUnknown(id: string, actor: string, reason: string): Promise<ActionRecord | null>;
}

/** Fetches a runbook URL's text (`@tarsy/runbooks` in production). */
export interface RunbookFetcher {
  fetch(url: string, signal?: AbortSignal): Promise<string>;
}

/** Tool definitions as the LLM sees them (`server.tool`). */
export interface ToolDefinition {
  name: string;
  server: string;
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** May change what it reaches (offered to action agents only); see the gateway's classes. */
  mutating?: boolean;
  /** A mutating tool whose calls have a dry-run form, run when approval is requested. */
  dryRun?: boolean;
}

export interface ToolScope {
  sessionId: string;
  executionId: string;
  servers: string[];
  toolFilters: Record<string, string[]>;
  /** Mutating tools are offered and run (action agents only); see `AgentRunConfig`. */
  allowMutating: boolean;
  /** The listed tools the gateway classes as mutating (`server.tool`): each call needs approval. */
  mutatingTools?: ReadonlySet<string>;
  /** Those of them with a dry-run form (`server.tool`). */
  dryRunTools?: ReadonlySet<string>;
}

export interface ToolCallResult {
  server: string | undefined;
  tool: string | undefined;
  arguments: Record<string, unknown> | undefined;
  /** Already masked by the gateway. */
  content: string;
  isError: boolean;
  /**
   * Who wrote `content`: a server (untrusted: fenced for the LLM), or TARSy itself (the
   * gateway's refusals, the runner's own tools). Unset: a server.
   */
  source?: "server" | "tarsy";
  durationMs: number;
}

/** mcp-gateway over NATS in production. */
export interface ToolGateway {
  listTools(
    scope: ToolScope,
    signal: AbortSignal,
  ): Promise<{ tools: ToolDefinition[]; failedServers: Record<string, string> }>;
  callTool(
    scope: ToolScope,
    call: {
      callId: string;
      name: string;
      arguments: string;
      approvalId?: string;
      /** Run the call's dry-run form instead of the call. */
      dryRun?: boolean;
    },
    signal: AbortSignal,
  ): Promise<ToolCallResult>;
  release(executionId: string): Promise<void>;
}

/** Investigation memory's storage, as the runner uses it (packages/db memories.ts). */
export interface MemoryStore {
  search(search: MemorySearch): Promise<ScoredMemory[]>;
  recordInjected(sessionId: string, memoryIds: readonly string[]): Promise<void>;
  create(scope: MemoryScope, memories: readonly NewMemory[]): Promise<InvestigationMemory[]>;
  reinforce(project: string, ids: readonly string[]): Promise<number>;
  deprecate(project: string, ids: readonly string[]): Promise<number>;
  searchPastSessions(search: PastSessionSearch): Promise<PastSession[]>;
  /** Memories learned from a session (the feedback reflector shows the live ones). */
  ofSession(sessionId: string): Promise<InvestigationMemory[]>;
  /** Writes a feedback reflection's memory changes, once per reflection. */
  applyFeedback(
    reflectionId: string,
    scope: MemoryScope,
    changes: FeedbackReflectionChanges,
  ): Promise<AppliedFeedbackReflection>;
  /**
   * With pgvector: an HNSW index for each embedding dimension stored and not indexed yet.
   * Returns the dimensions indexed by this call (none without pgvector).
   */
  indexVectors(): Promise<number[]>;
}
