/**
 * An iterating agent's time budget (the Go TARSy's ADR-0029 soft deadline). The execution's
 * deadline (session, chat turn, or a sub-agent's: its parent's remaining time, capped by
 * `agent_timeout`) is a hard stop: the runner aborts the execution there. Before it, the agent
 * keeps a reserve for one more LLM call: once no more than the reserve is left it stops
 * iterating and gives a forced conclusion (`reason: time_budget`), and every iteration before
 * is clamped so that it cannot eat into the reserve. The reserve is `queue.wrap_up_reserve`,
 * never more than one iteration's timeout, and never more than half the time the execution had
 * when it was created: a short budget (a two-minute chat turn, a late stage) still leaves half
 * of it to investigate. Without a deadline nothing changes.
 */
export class TimeBudget {
  constructor(
    /** Epoch ms of the hard deadline; null when the execution has none. */
    readonly deadlineAt: number | null,
    /** `queue.wrap_up_reserve`, never more than one iteration's timeout. */
    readonly reserveMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  static of(
    deadline: string | undefined,
    createdAt: Date,
    limits: { wrapUpReserveMs: number; iterationTimeoutMs: number },
  ): TimeBudget {
    const at = deadline === undefined ? Number.NaN : Date.parse(deadline);
    if (!Number.isFinite(at)) return new TimeBudget(null, 0);
    const whole = Math.max(0, at - createdAt.getTime());
    return new TimeBudget(
      at,
      Math.min(limits.wrapUpReserveMs, limits.iterationTimeoutMs, Math.floor(whole / 2)),
    );
  }

  /** Time left before the hard deadline (Infinity without one). */
  remainingMs(): number {
    return this.deadlineAt === null ? Number.POSITIVE_INFINITY : this.deadlineAt - this.now();
  }

  /** The agent must stop iterating now and conclude. */
  mustWrapUp(): boolean {
    return this.remainingMs() <= this.reserveMs;
  }

  /** When the wrap-up starts: the end of every iteration before it (null: no deadline). */
  wrapUpAt(): number | null {
    return this.deadlineAt === null ? null : this.deadlineAt - this.reserveMs;
  }

  /**
   * How long the next step of an iteration (an LLM attempt, a tool call) may take: `limitMs`,
   * clamped to the start of the wrap-up (at least 1 ms, at most what a timer can wait).
   */
  clampMs(limitMs: number): number {
    const wrapUpAt = this.wrapUpAt();
    const until = wrapUpAt === null ? limitMs : Math.min(limitMs, wrapUpAt - this.now());
    return Math.max(1, Math.min(MAX_TIMER_MS, until));
  }
}

/** The longest delay a Node.js timer keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

/** Why an agent gave a forced conclusion. */
export type WrapUpReason = "max_iterations" | "time_budget";
