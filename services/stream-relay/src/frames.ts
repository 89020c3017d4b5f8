import type {
  Channel,
  StreamChunk,
  WsChunkFrame,
  WsControlFrame,
  WsEventFrame,
} from "@tarsy/contracts";
import type { StoredEvent } from "./event-log.ts";

export function encodeEventFrame(channel: Channel, event: StoredEvent): string {
  const frame: WsEventFrame = {
    id: event.seq,
    channel,
    type: event.payload.type,
    session_id: event.payload.session_id,
    timestamp: event.payload.timestamp,
    payload: event.payload,
  };
  return JSON.stringify(frame);
}

export function encodeChunkFrame(channel: Channel, chunk: StreamChunk): string {
  const frame: WsChunkFrame = {
    type: "stream.chunk",
    channel,
    session_id: chunk.session_id,
    timestamp: chunk.timestamp,
    payload: chunk,
  };
  return JSON.stringify(frame);
}

export function encodeControlFrame(frame: WsControlFrame): string {
  return JSON.stringify(frame);
}
