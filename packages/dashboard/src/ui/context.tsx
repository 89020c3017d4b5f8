import { createContext, useContext, useEffect, useState } from "react";
import type { AccessState, AccessStore } from "../lib/access.ts";
import type { ApiClient } from "../lib/api.ts";
import type { ConnectionStatus, LiveConnection } from "../lib/live.ts";

export interface AppServices {
  api: ApiClient;
  live: LiveConnection;
  /** `/auth/me`, loaded once at start. */
  access: AccessStore;
}

export const ServicesContext = createContext<AppServices | null>(null);

export function useServices(): AppServices {
  const services = useContext(ServicesContext);
  if (!services) throw new Error("ServicesContext missing");
  return services;
}

export function useConnectionStatus(): ConnectionStatus {
  const { live } = useServices();
  const [status, setStatus] = useState<ConnectionStatus>(live.status);
  useEffect(() => live.onStatus(setStatus), [live]);
  return status;
}

/** What the caller may do; `loading` until `/auth/me` has answered. */
export function useAccess(): AccessState {
  const { access } = useServices();
  const [state, setState] = useState<AccessState>(access.current);
  useEffect(() => {
    setState(access.current);
    return access.onChange(setState);
  }, [access]);
  return state;
}

/** Loads a value once per key; `reload` fetches it again. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
): { data: T | null; error: Error | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: callers pass the keys of `load`
  useEffect(() => {
    let live = true;
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(null);
      },
      (err: Error) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}
