import { type McpServerConfig, SESSION_ID_PLACEHOLDER } from "@tarsy/config";
import type { Logger } from "@tarsy/runtime";
import { type McpConnection, openConnection } from "./connection.ts";
import type { TransportDeps } from "./transport.ts";

/**
 * How an execution got its session: `warm` (one was ready), `starting` (it waited for one the
 * pool had already begun to open), `cold` (it opened its own).
 */
export type PoolTake = "warm" | "starting" | "cold";

export interface WarmPoolOptions {
  servers: ReadonlyMap<string, McpServerConfig>;
  inheritedEnv: TransportDeps["inheritedEnv"];
  initTimeoutMs: number;
  /** Warm sessions per server when its config does not say (`MCP_WARM_POOL_SIZE`). */
  defaultSize: number;
  logger: Logger;
  /** Counts each take (`tarsy_mcp_warm_pool_takes_total`). */
  onTake?: (server: string, result: PoolTake) => void;
  /** How long a warm session may take to answer the ping that precedes its hand-out. */
  pingTimeoutMs?: number;
  /** Wait before opening again after a failed open or a warm session that died (doubles, to 60 s). */
  retryDelayMs?: number;
}

const MAX_RETRY_DELAY_MS = 60_000;

/**
 * Why a server's sessions cannot be opened ahead of the execution they serve, or undefined when
 * they can. A session that carries something of its execution or its user can only be opened
 * for that execution.
 */
export function notPoolable(config: McpServerConfig): string | undefined {
  if (config.auth.mode !== "shared") {
    return `auth.mode ${config.auth.mode}: the session carries the user's credentials`;
  }
  const t = config.transport;
  if (t.type !== "stdio") {
    const headers = Object.values(t.custom_headers ?? {});
    if (headers.some((value) => value.includes(SESSION_ID_PLACEHOLDER))) {
      return "custom_headers name the execution ({{.SESSION_ID}})";
    }
  }
  return undefined;
}

interface ServerPool {
  config: McpServerConfig;
  size: number;
  idle: McpConnection[];
  opening: number;
  /** Takes waiting for a session being opened (never more than `opening`). */
  waiters: ((connection: McpConnection | undefined) => void)[];
  /** Consecutive failed opens or deaths of warm sessions; resets once one is handed out. */
  failures: number;
  retry?: NodeJS.Timeout | undefined;
}

/**
 * Initialized MCP sessions (for stdio servers: started processes) kept ready per server, so an
 * execution's first tool call does not wait for a server to start. Isolation is unchanged: a
 * warm session is handed to exactly one execution, which closes it when it is released, and the
 * pool opens a new one in the background. A warm session that ended (its process died) leaves
 * the pool at once, and every hand-out is preceded by a ping, so a dead one is never handed out.
 */
export class WarmPool {
  private readonly pools = new Map<string, ServerPool>();
  private stopped = false;

  constructor(private readonly options: WarmPoolOptions) {
    for (const config of options.servers.values()) {
      const wanted = config.warm_pool ?? options.defaultSize;
      if (wanted === 0) continue;
      const reason = notPoolable(config);
      if (reason) {
        if (config.warm_pool !== undefined) {
          options.logger.warn(
            { server: config.id, reason },
            "warm_pool ignored: this server's sessions are opened per execution",
          );
        }
        continue;
      }
      this.pools.set(config.id, {
        config,
        size: wanted,
        idle: [],
        opening: 0,
        waiters: [],
        failures: 0,
      });
    }
  }

  /** Starts filling every pool (in the background). */
  start(): void {
    for (const pool of this.pools.values()) this.fill(pool);
  }

  /** Warm sessions per server (servers without a pool are absent). */
  sizes(): Record<string, number> {
    return Object.fromEntries([...this.pools].map(([id, pool]) => [id, pool.size]));
  }

  /** The processes of the warm sessions waiting now (stdio servers). */
  idlePids(serverId: string): number[] {
    const pool = this.pools.get(serverId);
    return (pool?.idle ?? []).map((c) => c.pid).filter((pid): pid is number => pid !== null);
  }

  /** How many warm sessions wait for the server now. */
  idleCount(serverId: string): number {
    return this.pools.get(serverId)?.idle.length ?? 0;
  }

  /**
   * A live warm session of the server for one execution, or undefined (no pool, or none ready):
   * the caller then opens one itself. The pool refills behind it.
   */
  async take(serverId: string): Promise<McpConnection | undefined> {
    const pool = this.pools.get(serverId);
    if (!pool || this.stopped) return undefined;
    for (;;) {
      let connection = pool.idle.shift();
      let result: PoolTake = "warm";
      if (!connection && pool.opening > pool.waiters.length) {
        // One is on its way and nobody claimed it: it is ready sooner than a new one would be.
        result = "starting";
        connection = await new Promise<McpConnection | undefined>((resolve) =>
          pool.waiters.push(resolve),
        );
      }
      if (!connection) {
        this.options.onTake?.(serverId, "cold");
        this.fill(pool);
        return undefined;
      }
      if (await this.answers(connection)) {
        pool.failures = 0;
        this.options.onTake?.(serverId, result);
        this.fill(pool);
        return connection;
      }
      void connection.close();
    }
  }

  /** Closes every warm session; nothing is opened after. */
  async close(): Promise<void> {
    this.stopped = true;
    const idle: McpConnection[] = [];
    for (const pool of this.pools.values()) {
      clearTimeout(pool.retry);
      idle.push(...pool.idle.splice(0));
      for (const waiter of pool.waiters.splice(0)) waiter(undefined);
    }
    await Promise.all(idle.map((c) => c.close()));
  }

  private async answers(connection: McpConnection): Promise<boolean> {
    if (connection.isClosed()) return false;
    try {
      await connection.ping(this.options.pingTimeoutMs ?? 2_000);
      return true;
    } catch {
      return false;
    }
  }

  /** Opens sessions until the pool holds its size (counting those opening). */
  private fill(pool: ServerPool): void {
    if (this.stopped || pool.retry) return;
    while (pool.idle.length + pool.opening < pool.size) {
      pool.opening += 1;
      void this.openOne(pool);
    }
  }

  private async openOne(pool: ServerPool): Promise<void> {
    const { config } = pool;
    let connection: McpConnection;
    try {
      connection = await openConnection(
        config,
        { inheritedEnv: this.options.inheritedEnv },
        this.options.initTimeoutMs,
      );
    } catch (err) {
      pool.opening -= 1;
      // Takes waiting on an open that will not come open their own.
      while (pool.waiters.length > pool.opening) pool.waiters.pop()?.(undefined);
      this.backOff(pool, { err }, "could not open a warm MCP session");
      return;
    }
    pool.opening -= 1;
    if (this.stopped) {
      await connection.close();
      return;
    }
    const waiter = pool.waiters.shift();
    if (waiter) {
      waiter(connection);
      return;
    }
    pool.idle.push(connection);
    connection.onClose(() => {
      const at = pool.idle.indexOf(connection);
      if (at === -1) return; // handed out, or closed by the pool
      pool.idle.splice(at, 1);
      this.backOff(pool, { pid: connection.pid }, "a warm MCP session ended while waiting");
    });
  }

  /** Waits longer after each failure before the pool tries to fill again. */
  private backOff(pool: ServerPool, detail: Record<string, unknown>, message: string): void {
    if (this.stopped) return;
    pool.failures += 1;
    const base = this.options.retryDelayMs ?? 1_000;
    const delay = Math.min(MAX_RETRY_DELAY_MS, base * 2 ** (pool.failures - 1));
    this.options.logger.warn(
      { server: pool.config.id, ...detail, retry_in_ms: delay, failures: pool.failures },
      message,
    );
    if (pool.retry) return;
    pool.retry = setTimeout(() => {
      pool.retry = undefined;
      this.fill(pool);
    }, delay);
    pool.retry.unref();
  }
}
