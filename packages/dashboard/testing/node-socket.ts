import WebSocket from "ws";
import type { SocketLike } from "../src/lib/live.ts";

/** The `ws` client in the browser WebSocket's shape, to drive a LiveConnection from Node. */
export function nodeSocket(url: string): SocketLike {
  return new WebSocket(url) as unknown as SocketLike;
}
