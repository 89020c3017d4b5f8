import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { classifyTool } from "@tarsy/config";
import type { McpServerHealth } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { McpConnection } from "./client/connection.ts";
import { ServerSessions, type ServerSessionsDeps } from "./client/server-sessions.ts";
import { describe } from "./errors.ts";
import type { SystemWarnings } from "./warnings.ts";

export interface HealthMonitorOptions {
  deps: ServerSessionsDeps;
  warnings: SystemWarnings;
  logger: Logger;
  intervalMs: number;
  pingTimeoutMs: number;
  now?: () => Date;
}

interface Status {
  healthy: boolean;
  initialized: boolean;
  error?: string;
  tools: Tool[];
  lastCheck?: Date;
}

export interface Readiness {
  ready: boolean;
  reason?: string;
}

/**
 * Checks every configured server on its own long-lived sessions: a tools/list ping, and on
 * failure a re-initialization. An unhealthy server raises one warning and one log line (again
 * only when its error changes, not at every check); recovery clears it. Ready once every server initialized; keeps each server's tool list.
 */
export class HealthMonitor {
  private readonly sessions: ServerSessions;
  private readonly statuses = new Map<string, Status>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly now: () => Date;

  constructor(private readonly options: HealthMonitorOptions) {
    this.sessions = new ServerSessions(options.deps);
    this.now = options.now ?? (() => new Date());
    for (const id of this.serverIds())
      this.statuses.set(id, { healthy: false, initialized: false, tools: [] });
  }

  private serverIds(): string[] {
    return [...this.options.deps.servers.keys()];
  }

  /** Runs the first check of every server, then checks every interval. */
  async start(): Promise<void> {
    await this.checkAll();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.checkAll().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.sessions.closeAll();
  }

  async checkAll(): Promise<void> {
    await Promise.all(this.serverIds().map((id) => this.checkServer(id)));
  }

  async checkServer(serverId: string): Promise<void> {
    const status = this.statuses.get(serverId);
    if (!status) return;
    const log = this.options.logger.child({ server: serverId });
    try {
      const tools = await this.ping(serverId);
      if (!status.initialized) this.logToolClasses(serverId, tools);
      const wasUnhealthy = !status.healthy && status.initialized;
      Object.assign(status, { healthy: true, initialized: true, tools, lastCheck: this.now() });
      delete status.error;
      if (this.options.warnings.clear("mcp_health", serverId) || wasUnhealthy) {
        log.info("MCP server recovered");
      }
    } catch (err) {
      const error = describe(err);
      // Logged when the server turns unhealthy or fails differently, not at every check.
      const news = status.healthy || status.error !== error;
      Object.assign(status, { healthy: false, error, lastCheck: this.now() });
      this.options.warnings.raise(
        "mcp_health",
        serverId,
        `MCP server "${serverId}" is unhealthy`,
        error,
      );
      if (news) log.warn({ err: error }, "MCP server health check failed");
      else log.debug({ err: error }, "MCP server still unhealthy");
    }
  }

  /**
   * Once per server, at its first listing: how many of its tools are read-only and mutating,
   * and a warning naming those that are mutating only because nothing classes them (no
   * `readOnlyHint`, no `mcp_servers.<id>.tools` entry): no agent but an action agent sees them.
   */
  private logToolClasses(serverId: string, tools: readonly Tool[]): void {
    const config = this.options.deps.servers.get(serverId);
    const classes = tools.map((t) => ({
      name: t.name,
      ...classifyTool(config ?? {}, t.name, t.annotations),
    }));
    const mutating = classes.filter((c) => c.mutating);
    const unclassed = classes.filter((c) => c.source === "default").map((c) => c.name);
    const log = this.options.logger.child({ server: serverId });
    log.info(
      { tools: tools.length, read_only: tools.length - mutating.length, mutating: mutating.length },
      "MCP server tool classes (mutating tools are offered to action agents only)",
    );
    if (unclassed.length > 0) {
      log.warn(
        { tools: unclassed },
        `${unclassed.length} tool(s) carry no readOnlyHint and count as mutating: only action agents see them; mark those that only read in mcp_servers.${serverId}.tools`,
      );
    }
  }

  /** tools/list on the current session; when that fails, re-initialize and list again. */
  private async ping(serverId: string): Promise<Tool[]> {
    const timeout = this.options.pingTimeoutMs;
    let current: McpConnection | undefined;
    if (await this.sessions.has(serverId)) {
      current = await this.sessions.get(serverId);
      try {
        return await current.listTools(timeout);
      } catch {
        // fall through to re-initialization
      }
    }
    const connection = await this.sessions.recreate(serverId, current);
    return connection.listTools(timeout);
  }

  statusList(): McpServerHealth[] {
    return [...this.statuses.entries()].map(([server, s]) => ({
      server,
      healthy: s.healthy,
      initialized: s.initialized,
      ...(s.error ? { error: s.error } : {}),
      tool_count: s.tools.length,
      ...(s.lastCheck ? { last_check: s.lastCheck.toISOString() } : {}),
    }));
  }

  /** Names of a server's tools as of its last check (undefined for an unknown server). */
  toolNames(serverId: string): string[] | undefined {
    return this.statuses.get(serverId)?.tools.map((t) => t.name);
  }

  cachedTools(): Map<string, { healthy: boolean; tools: Tool[] }> {
    return new Map(
      [...this.statuses.entries()].map(([id, s]) => [id, { healthy: s.healthy, tools: s.tools }]),
    );
  }

  isHealthy(): boolean {
    return [...this.statuses.values()].every((s) => s.healthy);
  }

  readiness(): Readiness {
    const pending = [...this.statuses.entries()].filter(([, s]) => !s.initialized);
    if (pending.length === 0) return { ready: true };
    const reasons = pending.map(([id, s]) => `${id}: ${s.error ?? "not checked yet"}`);
    return { ready: false, reason: `MCP servers not initialized: ${reasons.join("; ")}` };
  }
}
