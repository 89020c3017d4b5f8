import type { SessionStatus } from "@tarsy/contracts";
import type { DbClient } from "@tarsy/db";
import { insertSessionRows, insertTimelineEventRows } from "@tarsy/db/testing";

/** Size of the large tool results, as the issue names it. */
export const BIG_RESULT_BYTES = 100_000;
/** One tool result in this many events is a large one (5,000 events: 50 results of 100 KB). */
export const EVENTS_PER_BIG_RESULT = 100;

export interface ForgedSession {
  id: string;
  /** Timeline event ids in sequence order. */
  eventIds: string[];
  /** Tool results of `BIG_RESULT_BYTES`. */
  bigResults: number;
}

/** A pod listing as a tool returns it (JSON), padded with spaces to `bytes` characters. */
export function podListing(bytes: number): string {
  const pods: string[] = [];
  let length = 2; // the brackets
  for (let i = 0; ; i++) {
    const pod = JSON.stringify({
      name: `payments-api-${i}`,
      status: i % 9 ? "Running" : "CrashLoopBackOff",
      restarts: i % 7,
    });
    const added = pod.length + (pods.length ? 1 : 0);
    if (length + added > bytes) break;
    pods.push(pod);
    length += added;
  }
  const text = `[${pods.join(",")}]`;
  return `${text}${" ".repeat(bytes - text.length)}`;
}

const TOOL_METADATA = {
  server_name: "demo-cluster",
  tool_name: "get_pods",
  arguments: { namespace: "payments" },
};

/**
 * A session of `events` timeline events, stored as a long investigation leaves them: blocks of
 * ten (a thought, a tool call, eight markdown responses), one tool result in
 * `EVENTS_PER_BIG_RESULT` events of 100 KB, the others of 2 KB.
 */
export async function forgeSession(
  client: DbClient,
  options: { events: number; chainId: string; alertType: string; status: SessionStatus },
): Promise<ForgedSession> {
  const [id = ""] = await insertSessionRows(client, {
    count: 1,
    alertType: options.alertType,
    chainId: options.chainId,
    alertData: JSON.stringify({ note: `a session of ${options.events} events` }),
    status: options.status,
  });
  const big = podListing(BIG_RESULT_BYTES);
  const small = podListing(2_000);
  const eventIds: string[] = [];
  let bigResults = 0;
  const append = async (
    count: number,
    eventType: "llm_thinking" | "llm_tool_call" | "llm_response",
    content: string,
  ) => {
    if (count <= 0) return;
    const ids = await insertTimelineEventRows(client, id, {
      count,
      eventType,
      content,
      ...(eventType === "llm_tool_call" && { metadata: TOOL_METADATA }),
    });
    eventIds.push(...ids);
  };
  for (let block = 0; eventIds.length < options.events; block++) {
    const left = options.events - eventIds.length;
    await append(
      Math.min(1, left),
      "llm_thinking",
      "Event {n}: which pods restart, and since when?",
    );
    const isBig = (block * 10) % EVENTS_PER_BIG_RESULT === 0;
    if (left >= 2) {
      await append(1, "llm_tool_call", isBig ? big : small);
      if (isBig) bigResults++;
    }
    await append(
      Math.min(8, left - 2),
      "llm_response",
      "Event {n}: the agent looked at **one more thing** in `payments` and moved on.",
    );
  }
  return { id, eventIds, bigResults };
}

/** `count` finished sessions, older than any other, one millisecond apart. */
export async function forgeHistory(
  client: DbClient,
  options: { count: number; chainId: string; alertType: string },
): Promise<string[]> {
  return insertSessionRows(client, {
    count: options.count,
    alertType: options.alertType,
    chainId: options.chainId,
    alertData: JSON.stringify({ note: "history" }),
    status: "completed",
    ageMs: 7 * 24 * 3600_000,
  });
}
