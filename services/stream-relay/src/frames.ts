import type {
  Channel,
  StreamChunk,
  WsChunkFrame,
  WsControlFrame,
  WsEventFrame,
} from "@tarsy/contracts";
import type { StoredEvent } from "./event-log.ts";

/** An encoded frame: its `type` (for metrics) and the bytes every client is sent. */
export interface Frame {
  type: string;
  data: Buffer;
  /** The session an event or chunk frame is about (what authorization filters on). */
  sessionId?: string;
}

export function encodeEventFrame(channel: Channel, event: StoredEvent): Frame {
  const frame: WsEventFrame = {
    id: event.seq,
    channel,
    type: event.payload.type,
    session_id: event.payload.session_id,
    timestamp: event.payload.timestamp,
    payload: event.payload,
  };
  return {
    type: frame.type,
    data: Buffer.from(JSON.stringify(frame)),
    sessionId: frame.session_id,
  };
}

export function encodeChunkFrame(channel: Channel, chunk: StreamChunk): Frame {
  const frame: WsChunkFrame = {
    type: "stream.chunk",
    channel,
    session_id: chunk.session_id,
    timestamp: chunk.timestamp,
    payload: chunk,
  };
  return {
    type: frame.type,
    data: Buffer.from(JSON.stringify(frame)),
    sessionId: frame.session_id,
  };
}

export function encodeControlFrame(frame: WsControlFrame): Frame {
  return { type: frame.type, data: Buffer.from(JSON.stringify(frame)) };
}
