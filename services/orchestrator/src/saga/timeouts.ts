import { formatDuration, type TarsyConfig } from "@tarsy/config";

/*
 * The error a session, a chat turn or a judge run ends with when its time limit runs out. The
 * runner stops an execution at the same deadline and writes the same words, so the trace says
 * which limit ran out whichever side comes first.
 */

type QueueLimits = Pick<TarsyConfig, "queue">;

export function sessionTimeoutReason(config: QueueLimits): string {
  const limit = formatDuration(config.queue.session_timeout_ms);
  return `session timed out after ${limit} (queue.session_timeout)`;
}

export function chatTimeoutReason(config: QueueLimits): string {
  const limit = formatDuration(config.queue.chat_timeout_ms);
  return `chat turn timed out after ${limit} (queue.chat_timeout)`;
}

export function scoringTimeoutReason(limitMs: number): string {
  return `scoring timed out after ${formatDuration(limitMs)}`;
}
