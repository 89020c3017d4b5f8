import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "@tarsy/config";
import { ServerNotConfiguredError, SessionClosedError } from "../errors.ts";
import { type McpConnection, openConnection } from "./connection.ts";
import type { TransportDeps } from "./transport.ts";
import type { WarmPool } from "./warm-pool.ts";

export interface ServerSessionsDeps extends TransportDeps {
  servers: ReadonlyMap<string, McpServerConfig>;
  initTimeoutMs: number;
  /** Warm sessions to take before opening one (executions' sessions; not the health monitor's). */
  pool?: WarmPool | undefined;
}

interface Entry {
  connection: Promise<McpConnection>;
  tools?: Tool[];
}

/**
 * The MCP sessions of one owner (an agent execution, or the health monitor), one per server,
 * created on first use. Creating and re-creating a server's session is serialized per server:
 * concurrent callers share the one in progress, and a re-creation asked for a session that was
 * already replaced returns the replacement instead of making another.
 */
export class ServerSessions {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(private readonly deps: ServerSessionsDeps) {}

  /** The server's session, opening it when there is none. */
  get(serverId: string): Promise<McpConnection> {
    const existing = this.entries.get(serverId);
    if (existing) return existing.connection;
    return this.open(serverId).connection;
  }

  /** Whether the server has a live session now. */
  async has(serverId: string): Promise<boolean> {
    const entry = this.entries.get(serverId);
    if (!entry) return false;
    try {
      return !(await entry.connection).isClosed();
    } catch {
      return false;
    }
  }

  /** Replaces `failed` with a new session (or returns the replacement someone else made). */
  async recreate(serverId: string, failed: McpConnection | undefined): Promise<McpConnection> {
    const entry = this.entries.get(serverId);
    if (entry) {
      const current = await entry.connection.catch(() => undefined);
      if (current && failed && current !== failed && !current.isClosed()) return current;
      if (this.entries.get(serverId) !== entry) return this.get(serverId);
      this.entries.delete(serverId);
      if (current) await current.close();
    }
    return this.get(serverId);
  }

  /** The server's tool list, cached per session. */
  async listTools(serverId: string, timeoutMs: number): Promise<Tool[]> {
    const connection = await this.get(serverId);
    const entry = this.entries.get(serverId);
    if (entry?.tools) return entry.tools;
    const tools = await connection.listTools(timeoutMs);
    const now = this.entries.get(serverId);
    if (now === entry && entry) entry.tools = tools;
    return tools;
  }

  /** The cached tool list of the current session, if listed. */
  cachedTools(serverId: string): Tool[] | undefined {
    return this.entries.get(serverId)?.tools;
  }

  /** Forgets the cached tool list (the health monitor refreshes it every check). */
  invalidateTools(serverId: string): void {
    const entry = this.entries.get(serverId);
    if (entry) delete entry.tools;
  }

  size(): number {
    return this.entries.size;
  }

  /** Closes every session; later `get` calls fail. */
  async closeAll(): Promise<number> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    const connections = await Promise.all(entries.map((e) => e.connection.catch(() => undefined)));
    const open = connections.filter((c): c is McpConnection => c !== undefined);
    await Promise.all(open.map((c) => c.close()));
    return open.length;
  }

  private open(serverId: string): Entry {
    if (this.closed) {
      return {
        connection: Promise.reject(new SessionClosedError("these MCP sessions were released")),
      };
    }
    const config = this.deps.servers.get(serverId);
    const connection = config
      ? this.warmOrNew(config)
      : Promise.reject(new ServerNotConfiguredError(serverId));
    const entry: Entry = { connection };
    this.entries.set(serverId, entry);
    connection.then(
      (c) => {
        // Released while opening: close the orphan.
        if (this.closed || this.entries.get(serverId) !== entry) void c.close();
      },
      () => {
        // A failed open is not cached: the next use tries again.
        if (this.entries.get(serverId) === entry) this.entries.delete(serverId);
      },
    );
    return entry;
  }

  private async warmOrNew(config: McpServerConfig): Promise<McpConnection> {
    const warm = await this.deps.pool?.take(config.id);
    return warm ?? openConnection(config, this.deps, this.deps.initTimeoutMs);
  }
}
