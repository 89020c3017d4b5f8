import { z } from "zod";
import { IdSchema, TimestampSchema } from "./common.ts";
import { PersistentEventSchema, PersistentEventTypeSchema, StreamChunkSchema } from "./events.ts";

/** `sessions` (every session's lifecycle) or `session:<id>` (one session). */
export const ChannelSchema = z
  .string()
  .regex(
    /^(sessions|session:[A-Za-z0-9_-]{1,128})$/,
    "channel must be 'sessions' or 'session:<id>'",
  );
export type Channel = z.infer<typeof ChannelSchema>;

// --- client → server ---
export const WsClientActionSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("subscribe"), channel: ChannelSchema }),
  z.object({ action: z.literal("unsubscribe"), channel: ChannelSchema }),
  z.object({
    action: z.literal("catchup"),
    channel: ChannelSchema,
    last_event_id: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  }),
  z.object({ action: z.literal("ping") }),
]);
export type WsClientAction = z.infer<typeof WsClientActionSchema>;

// --- server → client ---
export const WsEventFrameSchema = z.object({
  /** The JetStream sequence of the event: acknowledge it and catch up from it. */
  id: z.number().int().positive(),
  channel: ChannelSchema,
  type: PersistentEventTypeSchema,
  session_id: IdSchema,
  timestamp: TimestampSchema,
  payload: PersistentEventSchema,
});
export type WsEventFrame = z.infer<typeof WsEventFrameSchema>;

export const WsChunkFrameSchema = z.object({
  type: z.literal("stream.chunk"),
  channel: ChannelSchema,
  session_id: IdSchema,
  timestamp: TimestampSchema,
  payload: StreamChunkSchema,
});
export type WsChunkFrame = z.infer<typeof WsChunkFrameSchema>;

export const WsControlFrameSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("connection.established"),
    connection_id: z.string(),
    user: z.string().nullable(),
  }),
  z.object({ type: z.literal("subscription.confirmed"), channel: ChannelSchema }),
  z.object({ type: z.literal("subscription.error"), channel: z.string(), message: z.string() }),
  z.object({ type: z.literal("pong") }),
  z.object({ type: z.literal("error"), code: z.string(), message: z.string() }),
  z.object({
    type: z.literal("catchup.overflow"),
    channel: ChannelSchema,
    /** How many events were missed, when known. */
    missed: z.number().int().nonnegative().optional(),
    limit: z.number().int().positive(),
  }),
]);
export type WsControlFrame = z.infer<typeof WsControlFrameSchema>;

export const WsServerFrameSchema = z.union([
  WsControlFrameSchema,
  WsChunkFrameSchema,
  WsEventFrameSchema,
]);
export type WsServerFrame = z.infer<typeof WsServerFrameSchema>;
