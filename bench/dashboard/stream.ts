import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Bus } from "@tarsy/bus";
import type { TimelineEventType } from "@tarsy/contracts";
import { podListing } from "./forge.ts";

export interface StreamOptions {
  sessionId: string;
  /** Sequence number of the first streamed event (after what the session holds). */
  firstSequence: number;
  seconds: number;
  /** One token delta every this many ms (LLM output at ~100 tokens/s). */
  chunkIntervalMs: number;
  /** Tool results of 100 KB every this many turns (the others are 2 KB). */
  bigResultEvery: number;
}

export interface StreamedEvent {
  eventId: string;
  /** Its final content. */
  content: string;
}

export interface StreamResult {
  events: number;
  chunks: number;
  last: StreamedEvent;
}

const WORDS = (
  "The pod payments-api restarts every few minutes; its last state is OOMKilled with exit code " +
  "137. The heap grows after each deploy, so the limit of 512Mi is too small for the new cache. " +
  "Next: compare the memory of the previous release and read the events of the namespace."
).split(" ");

/**
 * Streams an investigation into a session through the path a running agent takes to viewers:
 * `timeline_event.created` on JetStream, one `stream.chunk` per token on core NATS, then
 * `timeline_event.completed`. Each turn is a thought and a response streamed token by token and
 * a tool call with its result, for `seconds`. `ready` is awaited after the first event is
 * created (before any chunk: chunks are never replayed, so the viewer must be there).
 */
export async function streamInvestigation(
  bus: Bus,
  options: StreamOptions,
  ready: (first: StreamedEvent) => Promise<void>,
): Promise<StreamResult> {
  const big = podListing(100_000);
  const small = podListing(2_000);
  let sequence = options.firstSequence;
  let events = 0;
  let chunks = 0;
  let waited = false;
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  let nextChunkAt = started;

  const created = async (
    eventType: TimelineEventType,
    metadata: Record<string, unknown> | null,
  ) => {
    const eventId = randomUUID();
    await bus.publish("timelineEventCreated", {
      v: 1,
      type: "timeline_event.created",
      session_id: options.sessionId,
      stage_id: null,
      execution_id: null,
      event_id: eventId,
      sequence_number: sequence++,
      event_type: eventType,
      status: "streaming",
      content: "",
      metadata,
      timestamp: new Date().toISOString(),
    });
    events++;
    if (!waited) {
      waited = true;
      await ready({ eventId, content: "" });
      nextChunkAt = Date.now();
    }
    return eventId;
  };
  const completed = async (
    eventId: string,
    eventType: TimelineEventType,
    content: string,
    metadata: Record<string, unknown> | null,
  ): Promise<StreamedEvent> => {
    await bus.publish("timelineEventCompleted", {
      v: 1,
      type: "timeline_event.completed",
      session_id: options.sessionId,
      stage_id: null,
      execution_id: null,
      event_id: eventId,
      event_type: eventType,
      status: "completed",
      content,
      metadata,
      timestamp: new Date().toISOString(),
    });
    return { eventId, content };
  };
  const streamed = async (
    eventType: TimelineEventType,
    words: number,
    turn: number,
  ): Promise<StreamedEvent> => {
    const eventId = await created(eventType, null);
    let content = "";
    for (let i = 0; i < words; i++) {
      const delta = `${i === 0 ? `Turn ${turn}: ` : " "}${WORDS[i % WORDS.length]}`;
      content += delta;
      nextChunkAt += options.chunkIntervalMs;
      const wait = nextChunkAt - Date.now();
      if (wait > 0) await sleep(wait);
      bus.publishTransient("streamChunk", {
        v: 1,
        type: "stream.chunk",
        session_id: options.sessionId,
        stage_id: null,
        execution_id: null,
        event_id: eventId,
        delta,
        timestamp: new Date().toISOString(),
      });
      chunks++;
    }
    return completed(eventId, eventType, content, null);
  };

  let last: StreamedEvent | null = null;
  for (let turn = 1; last === null || Date.now() < deadline; turn++) {
    await streamed("llm_thinking", 40, turn);
    const metadata = {
      server_name: "demo-cluster",
      tool_name: "get_pods",
      arguments: { namespace: "payments", turn },
    };
    const tool = await created("llm_tool_call", metadata);
    await completed(
      tool,
      "llm_tool_call",
      turn % options.bigResultEvery === 0 ? big : small,
      metadata,
    );
    last = await streamed("llm_response", 80, turn);
  }
  return { events, chunks, last };
}
