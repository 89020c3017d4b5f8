/** Generic webhooks: a signed JSON POST of the session's outcome. */
import { createHmac } from "node:crypto";
import { type NotificationWebhookPayload, WEBHOOK_HEADERS } from "@tarsy/contracts";
import { describe, NotifyError } from "./errors.ts";

/** `sha256=` + hex HMAC-SHA256 of `<timestamp>.<body>`: what a receiver recomputes. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

export async function postWebhook(
  url: string,
  payload: NotificationWebhookPayload,
  secret: string | undefined,
  timeoutMs: number,
): Promise<void> {
  const body = JSON.stringify(payload);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "tarsy-notifier",
    [WEBHOOK_HEADERS.event]: payload.event,
    [WEBHOOK_HEADERS.delivery]: payload.delivery_id,
    [WEBHOOK_HEADERS.timestamp]: timestamp,
  };
  if (secret) headers[WEBHOOK_HEADERS.signature] = signWebhook(secret, timestamp, body);
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new NotifyError(`webhook unreachable: ${describe(err)}`, true, { cause: err });
  }
  await response.body?.cancel().catch(() => {});
  if (response.ok) return;
  const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
  throw new NotifyError(`webhook answered HTTP ${response.status}`, retryable);
}
