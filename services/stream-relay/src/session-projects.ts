import { LRUCache } from "lru-cache";

/** A session's project; `null` when the session has no row (yet). */
export type ProjectOf = string | null;

/** The project of each session the relay is asked about, looked up once and remembered. */
export interface SessionProjects {
  /** The project when known without a lookup; `undefined` when a lookup is needed. */
  cached(sessionId: string): ProjectOf | undefined;
  /**
   * The projects of the sessions (one query for those not cached). A session without a row
   * maps to `null`; a failing lookup (after retries) rejects: the caller fails closed.
   */
  resolve(sessionIds: readonly string[]): Promise<Map<string, ProjectOf>>;
}

export interface SessionProjectsOptions {
  /** id → project of the sessions that exist (`getSessionProjects` of `@tarsy/db`). */
  lookup(ids: readonly string[]): Promise<Map<string, string>>;
  /** Sessions remembered (a session's project never changes; least recently used go first). */
  maxEntries?: number;
  /**
   * Waits before asking again about sessions not found or a lookup that failed. An event is
   * published after its session's row is committed (the outbox), so a miss is a race or an
   * orphan event; the retries cover the race.
   */
  retryDelaysMs?: readonly number[];
  /** How long "no such session" is remembered, so an orphan's events do not stall a feed. */
  missingTtlMs?: number;
}

const MISSING = "";

/** Session projects over the database, with an LRU cache and retries. */
export function createSessionProjects(options: SessionProjectsOptions): SessionProjects {
  const retryDelays = options.retryDelaysMs ?? [50, 200, 500];
  const missingTtl = options.missingTtlMs ?? 5_000;
  // A project name is never empty, so "" marks a session known to have no row.
  const cache = new LRUCache<string, string>({ max: options.maxEntries ?? 100_000 });
  /** Lookups in flight, shared by everyone asking about the same session. */
  const inFlight = new Map<string, Promise<ProjectOf>>();

  const cached = (id: string): ProjectOf | undefined => {
    const hit = cache.get(id);
    if (hit === undefined) return undefined;
    return hit === MISSING ? null : hit;
  };

  async function lookupWithRetries(ids: string[]): Promise<Map<string, ProjectOf>> {
    const found = new Map<string, ProjectOf>();
    let remaining = ids;
    let lastError: unknown;
    for (let attempt = 0; attempt <= retryDelays.length && remaining.length > 0; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, retryDelays[attempt - 1]));
      try {
        const projects = await options.lookup(remaining);
        lastError = undefined;
        for (const [id, project] of projects) {
          found.set(id, project);
          cache.set(id, project);
        }
        remaining = remaining.filter((id) => !projects.has(id));
      } catch (err) {
        lastError = err;
      }
    }
    if (lastError !== undefined) throw lastError;
    for (const id of remaining) {
      found.set(id, null);
      cache.set(id, MISSING, { ttl: missingTtl });
    }
    return found;
  }

  return {
    cached,
    async resolve(sessionIds) {
      const result = new Map<string, ProjectOf>();
      const waits: Promise<void>[] = [];
      const toLookUp: string[] = [];
      for (const id of new Set(sessionIds)) {
        const hit = cached(id);
        if (hit !== undefined) result.set(id, hit);
        else {
          const pending = inFlight.get(id);
          if (pending) waits.push(pending.then((p) => void result.set(id, p)));
          else toLookUp.push(id);
        }
      }
      if (toLookUp.length > 0) {
        const batch = lookupWithRetries(toLookUp);
        for (const id of toLookUp) {
          const one = batch.then((m) => m.get(id) ?? null);
          inFlight.set(id, one);
          void one.then(
            () => inFlight.delete(id),
            () => inFlight.delete(id),
          );
          waits.push(one.then((p) => void result.set(id, p)));
        }
      }
      await Promise.all(waits);
      return result;
    },
  };
}
