/** Slack's Web API: the thread of a fingerprint, posting, and finding what we posted. */
import {
  ErrorCode,
  LogLevel,
  type Logger as SlackLogger,
  type WebAPICallError,
  WebClient,
} from "@slack/web-api";
import type { NotificationEvent } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import { NotifyError } from "./errors.ts";
import type { SlackMessage } from "./messages.ts";

/** Marks our messages so a send cut short can be found before sending again. */
export const METADATA_EVENT_TYPE = "tarsy_notification";

/** The Go TARSy's bound on the fingerprint search: 5 pages of 200 over the last 24 hours. */
const HISTORY_PAGES = 5;
const HISTORY_PAGE_SIZE = 200;
const HISTORY_WINDOW_S = 24 * 3600;

/** Platform errors that no retry fixes. */
const PERMANENT = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
  "missing_scope",
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "invalid_blocks",
  "invalid_blocks_format",
  "msg_too_long",
  "invalid_metadata_format",
  "invalid_metadata_schema",
  "restricted_action",
]);

export interface SlackOptions {
  token: string;
  channel: string;
  apiUrl: string;
  timeoutMs: number;
  logger: Logger;
}

export interface PostedRef {
  sessionId: string;
  event: NotificationEvent;
  /** The action request an `action_requested` message announces. */
  subject?: string;
}

interface HistoryMessage {
  ts?: string;
  text?: string;
  attachments?: { text?: string; fallback?: string }[];
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

/** Lower case, runs of whitespace as one space: how a fingerprint is compared. */
export const normalizeText = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();

const messageText = (message: HistoryMessage) =>
  [
    message.text ?? "",
    ...(message.attachments ?? []).flatMap((a) => [a.text ?? "", a.fallback ?? ""]),
  ]
    .filter(Boolean)
    .join(" ");

export class SlackChannel {
  private readonly client: WebClient;

  constructor(private readonly options: SlackOptions) {
    this.client = new WebClient(options.token, {
      slackApiUrl: options.apiUrl,
      // Retries are ours (bounded, recorded per delivery), not the client's.
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: options.timeoutMs,
      logger: slackLogger(options.logger),
    });
  }

  /** The ts of the newest recent channel message containing the fingerprint, or null. */
  async findThread(fingerprint: string): Promise<string | null> {
    const wanted = normalizeText(fingerprint);
    if (!wanted) return null;
    let cursor: string | undefined;
    for (let page = 0; page < HISTORY_PAGES; page++) {
      const history = await this.call(() =>
        this.client.conversations.history({
          channel: this.options.channel,
          oldest: String(Math.floor(Date.now() / 1000) - HISTORY_WINDOW_S),
          limit: HISTORY_PAGE_SIZE,
          ...(cursor ? { cursor } : {}),
        }),
      );
      for (const message of (history.messages ?? []) as HistoryMessage[]) {
        if (message.ts && normalizeText(messageText(message)).includes(wanted)) return message.ts;
      }
      cursor = history.response_metadata?.next_cursor;
      if (!history.has_more || !cursor) break;
    }
    return null;
  }

  /** Posts to the channel, or as a reply in `threadTs`; returns the message's ts. */
  async post(message: SlackMessage, threadTs: string | null, ref: PostedRef): Promise<string> {
    const result = await this.call(() =>
      this.client.chat.postMessage({
        channel: this.options.channel,
        text: message.text,
        blocks: message.blocks as never,
        unfurl_links: false,
        metadata: {
          event_type: METADATA_EVENT_TYPE,
          event_payload: {
            session_id: ref.sessionId,
            event: ref.event,
            ...(ref.subject ? { subject: ref.subject } : {}),
          },
        },
        ...(threadTs ? { thread_ts: threadTs } : {}),
      }),
    );
    return result.ts ?? "";
  }

  /**
   * The ts of a message we posted for `ref` since `since` (in the thread when there is one,
   * else the channel), or null: how a send cut short is told from one that never happened.
   */
  async findPosted(ref: PostedRef, threadTs: string | null, since: Date): Promise<string | null> {
    const oldest = String(Math.floor(since.getTime() / 1000) - 60);
    const page = await this.call(() =>
      threadTs
        ? this.client.conversations.replies({
            channel: this.options.channel,
            ts: threadTs,
            oldest,
            limit: HISTORY_PAGE_SIZE,
            include_all_metadata: true,
          })
        : this.client.conversations.history({
            channel: this.options.channel,
            oldest,
            limit: HISTORY_PAGE_SIZE,
            include_all_metadata: true,
          }),
    );
    const found = ((page.messages ?? []) as HistoryMessage[]).find(
      (m) =>
        m.metadata?.event_type === METADATA_EVENT_TYPE &&
        m.metadata.event_payload?.session_id === ref.sessionId &&
        m.metadata.event_payload?.event === ref.event &&
        (m.metadata.event_payload?.subject ?? "") === (ref.subject ?? ""),
    );
    return found?.ts ?? null;
  }

  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw classify(err as WebAPICallError);
    }
  }
}

function classify(err: WebAPICallError): NotifyError {
  switch (err.code) {
    case ErrorCode.PlatformError: {
      const code = err.data.error;
      return new NotifyError(`Slack refused: ${code}`, !PERMANENT.has(code), { cause: err });
    }
    case ErrorCode.RateLimitedError:
      return new NotifyError(`Slack rate limit (retry after ${err.retryAfter}s)`, true, {
        cause: err,
      });
    case ErrorCode.HTTPError:
      return new NotifyError(
        `Slack answered HTTP ${err.statusCode}`,
        err.statusCode >= 500 || err.statusCode === 408,
        { cause: err },
      );
    case ErrorCode.RequestError:
      return new NotifyError(`Slack unreachable: ${err.original?.message ?? err.message}`, true, {
        cause: err,
      });
    default:
      return new NotifyError(`Slack call failed: ${(err as Error).message}`, true, { cause: err });
  }
}

function slackLogger(logger: Logger): SlackLogger {
  const log = logger.child({ component: "slack-client" });
  return {
    debug: (...msg: unknown[]) => log.debug(msg.join(" ")),
    info: (...msg: unknown[]) => log.debug(msg.join(" ")),
    warn: (...msg: unknown[]) => log.warn(msg.join(" ")),
    error: (...msg: unknown[]) => log.error(msg.join(" ")),
    setLevel: () => {},
    getLevel: () => LogLevel.DEBUG,
    setName: () => {},
  };
}
