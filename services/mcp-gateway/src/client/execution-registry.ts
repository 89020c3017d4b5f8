import type { Logger } from "@tarsy/runtime";
import { ServerSessions, type ServerSessionsDeps } from "./server-sessions.ts";
import { cleanupExecutionSessions } from "./session-cleanup.ts";

export interface ExecutionScope {
  executionId: string;
  sessionId?: string | undefined;
  servers: readonly string[];
  toolFilters: Readonly<Record<string, readonly string[]>>;
  /** Mutating tools are listed and run for this execution (action agents only). */
  allowMutating: boolean;
}

export interface OpenExecution {
  /** The scope of the latest request (each request carries it). */
  scope: ExecutionScope;
  readonly sessions: ServerSessions;
  /** Marks work in progress so the idle sweep leaves the execution alone until `done`. */
  begin(): () => void;
}

interface Slot {
  execution: OpenExecution;
  lastUsed: number;
  active: number;
}

export interface ExecutionRegistryOptions {
  deps: ServerSessionsDeps;
  /** Sessions of an execution unused this long are closed. */
  idleTimeoutMs: number;
  /** How often idle executions are looked for. */
  sweepIntervalMs?: number;
  logger: Logger;
  now?: () => number;
}

/**
 * The open executions of this replica, each with its own MCP sessions: two executions never
 * share a session (or a stdio subprocess). An execution opens on its first request and closes
 * when released or idle too long.
 */
export class ExecutionRegistry {
  private readonly slots = new Map<string, Slot>();
  private readonly timer: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly options: ExecutionRegistryOptions) {
    this.now = options.now ?? Date.now;
    const every =
      options.sweepIntervalMs ?? Math.min(60_000, Math.max(1_000, options.idleTimeoutMs / 4));
    this.timer = setInterval(() => void this.sweepIdle(), every);
    this.timer.unref();
  }

  /** The execution's sessions, opening the execution on first use; the request's scope applies. */
  acquire(scope: ExecutionScope): OpenExecution {
    const existing = this.slots.get(scope.executionId);
    if (existing) {
      existing.lastUsed = this.now();
      existing.execution.scope = scope;
      return existing.execution;
    }
    const sessions = new ServerSessions({ ...this.options.deps, executionId: scope.executionId });
    const slot: Slot = {
      lastUsed: this.now(),
      active: 0,
      execution: {
        scope,
        sessions,
        begin: () => {
          slot.active += 1;
          slot.lastUsed = this.now();
          let done = false;
          return () => {
            if (done) return;
            done = true;
            slot.active -= 1;
            slot.lastUsed = this.now();
          };
        },
      },
    };
    this.slots.set(scope.executionId, slot);
    this.options.logger.debug(
      { execution_id: scope.executionId, session_id: scope.sessionId, servers: scope.servers },
      "execution opened",
    );
    return slot.execution;
  }

  has(executionId: string): boolean {
    return this.slots.has(executionId);
  }

  size(): number {
    return this.slots.size;
  }

  /** Closes the execution's sessions; returns how many were open, or undefined when unknown. */
  async release(executionId: string): Promise<number | undefined> {
    const slot = this.slots.get(executionId);
    if (!slot) return undefined;
    this.slots.delete(executionId);
    const closed = await slot.execution.sessions.closeAll();
    this.options.logger.debug({ execution_id: executionId, closed }, "execution released");
    await cleanupExecutionSessions(
      this.options.deps.servers,
      slot.execution.scope.servers,
      executionId,
      this.options.logger,
    );
    return closed;
  }

  /** Releases executions idle longer than the timeout; returns their ids. */
  async sweepIdle(): Promise<string[]> {
    const cutoff = this.now() - this.options.idleTimeoutMs;
    const idle = [...this.slots.entries()]
      .filter(([, slot]) => slot.active === 0 && slot.lastUsed <= cutoff)
      .map(([id]) => id);
    for (const id of idle) {
      this.options.logger.info({ execution_id: id }, "closing idle execution's MCP sessions");
      await this.release(id);
    }
    return idle;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.slots.keys()].map((id) => this.release(id)));
  }
}
