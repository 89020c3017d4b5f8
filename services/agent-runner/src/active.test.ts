import { describe, expect, test } from "vitest";
import { ActiveExecutions } from "./active.ts";
import { ExecutionAbortedError } from "./errors.ts";

const control = (session: string, scope: "session" | "chat", stageId?: string) => ({
  v: 1 as const,
  session_id: session,
  scope,
  ...(stageId && { stage_id: stageId }),
  reason: "cancelled" as const,
  timestamp: new Date().toISOString(),
});

describe("cancel routing", () => {
  test("a session cancel aborts every execution of that session only", () => {
    const active = new ActiveExecutions();
    const a = active.add("e1", "s1", "st1");
    const b = active.add("e2", "s1", "st2");
    const other = active.add("e3", "s2", "st3");
    expect(active.cancel(control("s1", "session"))).toBe(2);
    expect(a.signal.aborted && b.signal.aborted).toBe(true);
    expect(other.signal.aborted).toBe(false);
    expect(a.signal.reason).toBeInstanceOf(ExecutionAbortedError);
    expect((a.signal.reason as ExecutionAbortedError).reason).toBe("cancelled");
  });

  test("a chat cancel aborts only the chat turn's stage", () => {
    const active = new ActiveExecutions();
    const investigation = active.add("e1", "s1", "st1");
    const chat = active.add("e2", "s1", "chat-stage");
    expect(active.cancel(control("s1", "chat", "chat-stage"))).toBe(1);
    expect(chat.signal.aborted).toBe(true);
    expect(investigation.signal.aborted).toBe(false);
    active.remove("e2");
    expect(active.size).toBe(1);
  });
});
