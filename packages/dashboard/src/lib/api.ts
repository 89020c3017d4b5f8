import {
  ActionAuditSchema,
  ActionListSchema,
  ActionSchema,
  type ActionStatus,
  ActiveSessionsResponseSchema,
  type AlertSubmitRequest,
  AlertSubmitResponseSchema,
  AlertTypesResponseSchema,
  AuthMeResponseSchema,
  CancelResponseSchema,
  ChatMessageResponseSchema,
  FilterOptionsResponseSchema,
  HttpErrorBodySchema,
  LLMInteractionDetailSchema,
  MCPInteractionDetailSchema,
  McpServersResponseSchema,
  MemoryListResponseSchema,
  MemoryResponseSchema,
  type MemoryUpdateRequest,
  ReviewActivityResponseSchema,
  RunbooksResponseSchema,
  ScoreSessionResponseSchema,
  SessionDeleteResponseSchema,
  SessionDetailSchema,
  SessionListResponseSchema,
  SessionMemoriesResponseSchema,
  SessionNotificationsResponseSchema,
  SessionScoreSchema,
  SystemConfigResponseSchema,
  SystemWarningsResponseSchema,
  TimelineResponseSchema,
  TraceListResponseSchema,
  type TriageGroup,
  TriageGroupResponseSchema,
  type UpdateReviewRequest,
  UpdateReviewResponseSchema,
  UsageSeriesResponseSchema,
  UsageSummaryResponseSchema,
} from "@tarsy/contracts";
import { z } from "zod";
import { type MemoryState, memoryQueryString } from "./memory-state.ts";
import { type ListState, listQueryString } from "./url-state.ts";
import { type UsageState, usageQueryString, usageSeriesQueryString } from "./usage-state.ts";

/** An error answered by the API (its `{ error: { code, message } }` body) or the network. */
export class ApiError extends Error {
  readonly code: string;
  constructor(
    code: string,
    message: string,
    readonly status: number,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
  }
}

export interface ApiClient {
  listSessions(state: ListState): Promise<z.infer<typeof SessionListResponseSchema>>;
  activeSessions(): Promise<z.infer<typeof ActiveSessionsResponseSchema>>;
  filterOptions(): Promise<z.infer<typeof FilterOptionsResponseSchema>>;
  session(id: string): Promise<z.infer<typeof SessionDetailSchema>>;
  timeline(id: string): Promise<z.infer<typeof TimelineResponseSchema>>;
  /** Cancels a session (or its running chat answer); a non-blank reason goes with it. */
  cancel(id: string, reason?: string): Promise<z.infer<typeof CancelResponseSchema>>;
  /** Soft-deletes an ended session (409 `session_active` while it runs). */
  deleteSession(id: string): Promise<z.infer<typeof SessionDeleteResponseSchema>>;
  sendChat(id: string, content: string): Promise<z.infer<typeof ChatMessageResponseSchema>>;
  trace(id: string): Promise<z.infer<typeof TraceListResponseSchema>>;
  llmInteraction(id: string, iid: string): Promise<z.infer<typeof LLMInteractionDetailSchema>>;
  mcpInteraction(id: string, iid: string): Promise<z.infer<typeof MCPInteractionDetailSchema>>;
  submitAlert(body: AlertSubmitRequest): Promise<z.infer<typeof AlertSubmitResponseSchema>>;
  alertTypes(): Promise<z.infer<typeof AlertTypesResponseSchema>>;
  mcpServers(): Promise<z.infer<typeof McpServersResponseSchema>>;
  warnings(): Promise<z.infer<typeof SystemWarningsResponseSchema>>;
  /** The resolved configuration, without secrets. */
  systemConfig(): Promise<z.infer<typeof SystemConfigResponseSchema>>;
  /** Runbook URLs from `system.runbooks.repo_url` (the server answers [] when it cannot list). */
  runbooks(): Promise<z.infer<typeof RunbooksResponseSchema>>;
  /** Who the caller is and what they may do, project by project. */
  authMe(): Promise<z.infer<typeof AuthMeResponseSchema>>;
  /** LLM usage and estimated cost over the state's range (the caller's visible projects). */
  usageSummary(state: UsageState): Promise<z.infer<typeof UsageSummaryResponseSchema>>;
  /** Estimated cost per calendar day of `timeZone` (IANA; UTC without one) and model. */
  usageSeries(
    state: UsageState,
    timeZone: string | undefined,
  ): Promise<z.infer<typeof UsageSeriesResponseSchema>>;
  /** Asks the judge to score an ended session (409 while it runs or is being scored). */
  scoreSession(id: string): Promise<z.infer<typeof ScoreSessionResponseSchema>>;
  /** The session's latest score (404 `score_not_found` when it was never scored). */
  sessionScore(id: string): Promise<z.infer<typeof SessionScoreSchema>>;
  /** Each Slack and webhook delivery of the session, oldest first. */
  sessionNotifications(id: string): Promise<z.infer<typeof SessionNotificationsResponseSchema>>;
  /** One review action on up to 50 sessions; each succeeds or fails alone. */
  updateReview(body: UpdateReviewRequest): Promise<z.infer<typeof UpdateReviewResponseSchema>>;
  reviewActivity(id: string): Promise<z.infer<typeof ReviewActivityResponseSchema>>;
  /** A page of one triage group; `assignee` "" means unassigned, undefined everyone. */
  triageGroup(
    group: TriageGroup,
    query: { page: number; page_size: number; assignee?: string | undefined },
  ): Promise<z.infer<typeof TriageGroupResponseSchema>>;
  /** A page of the caller's projects' investigation memories. */
  listMemories(state: MemoryState): Promise<z.infer<typeof MemoryListResponseSchema>>;
  /** Edits a memory (e.g. `{deprecated: true}`); answers it as changed. */
  updateMemory(
    id: string,
    change: MemoryUpdateRequest,
  ): Promise<z.infer<typeof MemoryResponseSchema>>;
  deleteMemory(id: string): Promise<null>;
  /** Memories learned from the session. */
  sessionMemories(id: string): Promise<z.infer<typeof SessionMemoriesResponseSchema>>;
  /** Memories given to the session's agents. */
  injectedMemories(id: string): Promise<z.infer<typeof SessionMemoriesResponseSchema>>;
  /** Action requests (mutating calls of action agents), newest first. */
  listActions(query: {
    status?: ActionStatus;
    session_id?: string;
  }): Promise<z.infer<typeof ActionListSchema>>;
  /** Approves or denies a pending request (409 `action_decided`, 403 `four_eyes`). */
  decideAction(
    id: string,
    decision: "approve" | "deny",
    comment: string,
  ): Promise<z.infer<typeof ActionSchema>>;
  /** A request's append-only audit record, oldest first. */
  actionAudit(id: string): Promise<z.infer<typeof ActionAuditSchema>>;
}

/** The REST client over `/api/v1` at `baseUrl` (empty: same origin). */
export function createApiClient(baseUrl = "", fetchImpl: typeof fetch = fetch): ApiClient {
  async function call<S extends z.ZodType>(
    schema: S,
    path: string,
    init?: RequestInit,
  ): Promise<z.infer<S>> {
    let res: Response;
    try {
      res = await fetchImpl(`${baseUrl}/api/v1${path}`, {
        ...init,
        headers: {
          accept: "application/json",
          ...(init?.body ? { "content-type": "application/json" } : {}),
        },
      });
    } catch (err) {
      throw new ApiError("network", `API unreachable: ${(err as Error).message}`, 0);
    }
    const body: unknown = await res.json().catch(() => null);
    if (!res.ok) {
      const parsed = HttpErrorBodySchema.safeParse(body);
      if (parsed.success) {
        const { code, message, details } = parsed.data.error;
        throw new ApiError(code, message, res.status, details);
      }
      throw new ApiError("http", `HTTP ${res.status}`, res.status);
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new ApiError("invalid_response", `unexpected response from ${path}`, res.status);
    }
    return parsed.data;
  }
  const sid = (id: string) => `/sessions/${encodeURIComponent(id)}`;
  return {
    listSessions: (state) => call(SessionListResponseSchema, `/sessions?${listQueryString(state)}`),
    activeSessions: () => call(ActiveSessionsResponseSchema, "/sessions/active"),
    filterOptions: () => call(FilterOptionsResponseSchema, "/sessions/filter-options"),
    session: (id) => call(SessionDetailSchema, sid(id)),
    timeline: (id) => call(TimelineResponseSchema, `${sid(id)}/timeline`),
    cancel: (id, reason) =>
      call(CancelResponseSchema, `${sid(id)}/cancel`, {
        method: "POST",
        ...(reason?.trim() && { body: JSON.stringify({ reason: reason.trim() }) }),
      }),
    deleteSession: (id) => call(SessionDeleteResponseSchema, sid(id), { method: "DELETE" }),
    sendChat: (id, content) =>
      call(ChatMessageResponseSchema, `${sid(id)}/chat/messages`, {
        method: "POST",
        body: JSON.stringify({ content }),
      }),
    trace: (id) => call(TraceListResponseSchema, `${sid(id)}/trace`),
    llmInteraction: (id, iid) =>
      call(LLMInteractionDetailSchema, `${sid(id)}/trace/llm/${encodeURIComponent(iid)}`),
    mcpInteraction: (id, iid) =>
      call(MCPInteractionDetailSchema, `${sid(id)}/trace/mcp/${encodeURIComponent(iid)}`),
    submitAlert: (body) =>
      call(AlertSubmitResponseSchema, "/alerts", { method: "POST", body: JSON.stringify(body) }),
    alertTypes: () => call(AlertTypesResponseSchema, "/system/alert-types"),
    mcpServers: () => call(McpServersResponseSchema, "/system/mcp-servers"),
    warnings: () => call(SystemWarningsResponseSchema, "/system/warnings"),
    systemConfig: () => call(SystemConfigResponseSchema, "/system/config"),
    runbooks: () => call(RunbooksResponseSchema, "/runbooks"),
    authMe: () => call(AuthMeResponseSchema, "/auth/me"),
    usageSummary: (state) =>
      call(UsageSummaryResponseSchema, `/usage/summary?${usageQueryString(state)}`),
    usageSeries: (state, timeZone) =>
      call(UsageSeriesResponseSchema, `/usage/series?${usageSeriesQueryString(state, timeZone)}`),
    scoreSession: (id) => call(ScoreSessionResponseSchema, `${sid(id)}/score`, { method: "POST" }),
    sessionScore: (id) => call(SessionScoreSchema, `${sid(id)}/score`),
    sessionNotifications: (id) =>
      call(SessionNotificationsResponseSchema, `${sid(id)}/notifications`),
    updateReview: (body) =>
      call(UpdateReviewResponseSchema, "/sessions/review", {
        method: "PATCH",
        body: JSON.stringify(body),
      }),
    reviewActivity: (id) => call(ReviewActivityResponseSchema, `${sid(id)}/review-activity`),
    triageGroup: (group, query) => {
      const q = new URLSearchParams({
        page: String(query.page),
        page_size: String(query.page_size),
      });
      if (query.assignee !== undefined) q.set("assignee", query.assignee);
      return call(TriageGroupResponseSchema, `/sessions/triage/${group}?${q}`);
    },
    listMemories: (state) =>
      call(MemoryListResponseSchema, `/memories?${memoryQueryString(state)}`),
    updateMemory: (id, change) =>
      call(MemoryResponseSchema, `/memories/${encodeURIComponent(id)}`, {
        method: "PATCH",
        body: JSON.stringify(change),
      }),
    // 204 without a body.
    deleteMemory: (id) =>
      call(z.null(), `/memories/${encodeURIComponent(id)}`, { method: "DELETE" }),
    sessionMemories: (id) => call(SessionMemoriesResponseSchema, `${sid(id)}/memories`),
    injectedMemories: (id) => call(SessionMemoriesResponseSchema, `${sid(id)}/injected-memories`),
    listActions: (query) => {
      const q = new URLSearchParams();
      if (query.status) q.set("status", query.status);
      if (query.session_id) q.set("session_id", query.session_id);
      return call(ActionListSchema, `/actions?${q}`);
    },
    decideAction: (id, decision, comment) =>
      call(ActionSchema, `/actions/${encodeURIComponent(id)}/${decision}`, {
        method: "POST",
        ...(comment.trim() && { body: JSON.stringify({ comment: comment.trim() }) }),
      }),
    actionAudit: (id) => call(ActionAuditSchema, `/actions/${encodeURIComponent(id)}/audit`),
  };
}
