import type { Command } from "../command.ts";
import {
  actionApproveCommand,
  actionDenyCommand,
  actionListCommand,
  actionShowCommand,
} from "./action.ts";
import { alertSubmitCommand } from "./alert-submit.ts";
import { chatCommand } from "./chat.ts";
import { configCheckCommand } from "./config-check.ts";
import { dlqDiscardCommand, dlqListCommand, dlqRedriveCommand } from "./dlq.ts";
import { eventsReplayCommand } from "./events-replay.ts";
import {
  memoryDeleteCommand,
  memoryDeprecateCommand,
  memoryListCommand,
  memoryShowCommand,
} from "./memory.ts";
import { sessionCancelCommand } from "./session-cancel.ts";
import { sessionDeleteCommand } from "./session-delete.ts";
import { sessionListCommand } from "./session-list.ts";
import { sessionReviewCommand } from "./session-review.ts";
import { sessionShowCommand } from "./session-show.ts";
import { sessionTraceCommand } from "./session-trace.ts";
import { sessionWatchCommand } from "./session-watch.ts";
import { tokenCreateCommand, tokenListCommand, tokenRevokeCommand } from "./token.ts";
import { triageCommand } from "./triage.ts";
import { usageCommand } from "./usage.ts";

/** Every `tarsy` command. Add new ones here; the longest matching path wins. */
export const COMMANDS: readonly Command[] = [
  alertSubmitCommand,
  sessionListCommand,
  sessionShowCommand,
  sessionWatchCommand,
  sessionTraceCommand,
  sessionCancelCommand,
  sessionDeleteCommand,
  sessionReviewCommand,
  triageCommand,
  chatCommand,
  eventsReplayCommand,
  dlqListCommand,
  dlqRedriveCommand,
  dlqDiscardCommand,
  configCheckCommand,
  tokenCreateCommand,
  tokenListCommand,
  tokenRevokeCommand,
  usageCommand,
  memoryListCommand,
  memoryShowCommand,
  memoryDeprecateCommand,
  memoryDeleteCommand,
  actionListCommand,
  actionShowCommand,
  actionApproveCommand,
  actionDenyCommand,
];
