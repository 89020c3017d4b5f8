import {
  claimActionCall,
  type Db,
  finishActionCall,
  type OutboxPublisher,
  publishOutboxNow,
} from "@tarsy/db";
import type { Logger } from "@tarsy/runtime";

/**
 * The gateway's side of action requests (issue #30): an approved mutating call is claimed
 * (marked started, once) before it is sent, and its end is recorded after. A claim refused
 * means the call is not sent.
 */
export interface ActionLedger {
  claim(input: {
    id: string;
    executionId: string;
    server: string;
    tool: string;
    rawArguments: string;
  }): Promise<
    | { ok: true }
    | { ok: false; reason: "not_found" | "not_this_call" | "not_approved" | "already_started" }
  >;
  finish(id: string, status: "succeeded" | "failed" | "unknown", result: string): Promise<void>;
}

/** The ledger on Postgres; each step's `action.status` event is published at once. */
export function createActionLedger(
  db: Db,
  publish: OutboxPublisher,
  replica: string,
  logger: Logger,
): ActionLedger {
  const deliver = (msgIds: string[]) =>
    publishOutboxNow(db.prisma, publish, msgIds).catch((err: unknown) =>
      // The orchestrator's outbox relay publishes what is left.
      logger.warn({ err }, "action event not published yet"),
    );
  return {
    async claim(input) {
      const result = await claimActionCall(db.prisma, { ...input, replica, at: new Date() });
      if (result.outcome === "refused") return { ok: false, reason: result.reason };
      await deliver(result.events.map((e) => e.msgId));
      return { ok: true };
    },
    async finish(id, status, result) {
      const ended = await finishActionCall(db.prisma, {
        id,
        status,
        result,
        actor: `mcp-gateway:${replica}`,
        at: new Date(),
      });
      if (ended) await deliver(ended.events.map((e) => e.msgId));
    },
  };
}

/** What the agent is told when a mutating call's claim is refused (nothing was sent). */
export function claimRefusal(
  server: string,
  tool: string,
  reason:
    | "missing"
    | "no_ledger"
    | "not_found"
    | "not_this_call"
    | "not_approved"
    | "already_started",
): string {
  const what = `tool "${tool}" of server "${server}" may change the system (mutating)`;
  switch (reason) {
    case "missing":
      return `${what} and runs only with an approved action request; this call carried none. The call was not made.`;
    case "no_ledger":
      return `${what}, and this gateway has no database to check approvals against (DATABASE_URL is not set). The call was not made.`;
    case "not_found":
      return `${what}, and its action request does not exist. The call was not made.`;
    case "not_this_call":
      return `${what}, and the approval it carried was for another call (another execution, tool or arguments). The call was not made.`;
    case "not_approved":
      return `${what}, and its action request is not approved. The call was not made.`;
    case "already_started":
      return `${what}, and this approved call was already sent once: it is never sent twice. Its outcome is unknown unless its record says otherwise. The call was not made again.`;
  }
}
