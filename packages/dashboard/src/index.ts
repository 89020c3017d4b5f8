export { type AlertFormInput, type AlertFormResult, buildAlertRequest } from "./lib/alert-form.ts";
export { type ApiClient, ApiError, createApiClient } from "./lib/api.ts";
export {
  DEFAULT_WS_PATH,
  type RuntimeConfig,
  RuntimeConfigSchema,
  resolveWsUrl,
} from "./lib/config.ts";
export { ChannelCursors } from "./lib/cursor.ts";
export {
  type ChannelHandlers,
  type ConnectionStatus,
  createLiveConnection,
  type LiveConnection,
  type LiveConnectionOptions,
  type SocketLike,
} from "./lib/live.ts";
export {
  EMPTY_TIMELINE,
  groupByExecution,
  type TimelineAction,
  type TimelineItem,
  type TimelineState,
  timelineItems,
  timelineReducer,
} from "./lib/timeline.ts";
export {
  DEFAULT_LIST_STATE,
  formatListState,
  type ListState,
  listQueryString,
  parseListState,
} from "./lib/url-state.ts";
