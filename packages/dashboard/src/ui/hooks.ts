import type { Channel } from "@tarsy/contracts";
import { useEffect, useRef, useState } from "react";
import type { ChannelHandlers } from "../lib/live.ts";
import { useServices } from "./context.tsx";

/** Joins a live channel while mounted; handlers may change between renders. */
export function useChannel(channel: Channel, handlers: ChannelHandlers): void {
  const { live } = useServices();
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(
    () =>
      live.subscribe(channel, {
        onEvent: (f) => ref.current.onEvent?.(f),
        onChunk: (f) => ref.current.onChunk?.(f),
        onOverflow: () => ref.current.onOverflow?.(),
        onConfirmed: () => ref.current.onConfirmed?.(),
      }),
    [live, channel],
  );
}

/** Calls `fn` at most once per `ms`, trailing. */
export function useThrottled(fn: () => void, ms: number): () => void {
  const ref = useRef(fn);
  ref.current = fn;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return () => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      ref.current();
    }, ms);
  };
}

/** The current time, ticking every second (elapsed times). */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}
