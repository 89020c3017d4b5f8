import type { CancelControl } from "@tarsy/contracts";
import { ExecutionAbortedError } from "./errors.ts";

interface Entry {
  sessionId: string;
  stageId: string | null;
  controller: AbortController;
}

/** Executions running in this process, so a cancel for a session can reach them. */
export class ActiveExecutions {
  private readonly entries = new Map<string, Entry>();

  add(executionId: string, sessionId: string, stageId: string | null): AbortController {
    const controller = new AbortController();
    this.entries.set(executionId, { sessionId, stageId, controller });
    return controller;
  }

  remove(executionId: string): void {
    this.entries.delete(executionId);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Aborts the session's executions (only the chat turn's stage for scope `chat`, only the
   * named one for scope `execution`).
   */
  cancel(control: CancelControl): number {
    let count = 0;
    for (const [executionId, entry] of this.entries) {
      if (entry.sessionId !== control.session_id) continue;
      if (control.scope === "execution" && executionId !== control.execution_id) continue;
      if (control.scope === "chat" && control.stage_id && entry.stageId !== control.stage_id)
        continue;
      if (entry.controller.signal.aborted) continue;
      entry.controller.abort(new ExecutionAbortedError(control.reason));
      count++;
    }
    return count;
  }
}
