import {
  ChatMessageResponseSchema,
  type PersistentEvent,
  SessionDetailSchema,
  type WsChunkFrame,
} from "@tarsy/contracts";
import { callApi } from "../api.ts";
import { type Command, EXIT, HELP_OPTION, positionalArgs, UsageError } from "../command.ts";
import { type FollowDecision, followChannel } from "../follow.ts";
import { TimelinePrinter } from "../timeline-printer.ts";
import { sessionChannel } from "./session-watch.ts";

const USAGE = `Usage: tarsy chat <session-id> "question"

Asks a follow-up question about a finished session (POST /api/v1/sessions/:id/chat/messages),
then streams the answer over the WebSocket until the answering stage ends. Exits 0 when the
answer completed, 1 when its stage failed, was cancelled or timed out.

Options:
  -h, --help   show this help

Environment: TARSY_API_URL, TARSY_WS_URL
`;

type Frame = { kind: "event"; event: PersistentEvent } | { kind: "chunk"; frame: WsChunkFrame };

/** Picks out the frames of one chat turn's answering stage from a session's live frames. */
class ChatTurn {
  chatId: string | undefined;
  messageId: string | undefined;
  stageId: string | undefined;
  /** Frames of stages we cannot attribute yet, by stage id. */
  private readonly pending = new Map<string, Frame[]>();

  constructor(
    private readonly earlierStages: ReadonlySet<string>,
    private readonly printer: TimelinePrinter,
  ) {}

  answered(stageId: string | null): void {
    if (stageId) this.adopt(stageId);
  }

  onFrame(frame: Frame): FollowDecision {
    if (frame.kind === "event") {
      const event = frame.event;
      if (event.type === "chat.user_message" && event.message_id === this.messageId) {
        this.printer.event(event);
        if (event.stage_id) return this.adopt(event.stage_id);
        return undefined;
      }
      if (
        event.type === "stage.status" &&
        this.stageId === undefined &&
        this.chatId !== undefined &&
        event.chat_id === this.chatId &&
        !this.earlierStages.has(event.stage_id)
      ) {
        this.queue(event.stage_id, frame);
        return this.adopt(event.stage_id);
      }
    }
    const stageId = frame.kind === "event" ? stageOf(frame.event) : frame.frame.payload.stage_id;
    if (!stageId) return undefined;
    if (stageId === this.stageId) return this.show(frame);
    if (this.stageId === undefined && !this.earlierStages.has(stageId)) this.queue(stageId, frame);
    return undefined;
  }

  private queue(stageId: string, frame: Frame): void {
    const list = this.pending.get(stageId) ?? [];
    list.push(frame);
    this.pending.set(stageId, list);
  }

  private adopt(stageId: string): FollowDecision {
    if (this.stageId !== undefined) return undefined;
    this.stageId = stageId;
    const queued = this.pending.get(stageId) ?? [];
    this.pending.clear();
    for (const frame of queued) {
      const decision = this.show(frame);
      if (decision) return decision;
    }
    return undefined;
  }

  private show(frame: Frame): FollowDecision {
    if (frame.kind === "chunk") {
      this.printer.chunk(frame.frame);
      return undefined;
    }
    const event = frame.event;
    this.printer.event(event);
    if (event.type === "stage.status" && event.status !== "started") {
      return { exit: event.status === "completed" ? EXIT.ok : EXIT.failed };
    }
    return undefined;
  }
}

function stageOf(event: PersistentEvent): string | null {
  switch (event.type) {
    case "timeline_event.created":
    case "timeline_event.completed":
    case "chat.user_message":
      return event.stage_id;
    case "stage.status":
      return event.stage_id;
    default:
      return null;
  }
}

export const chatCommand: Command = {
  path: ["chat"],
  summary: "ask a follow-up question about a session and stream the answer",
  usage: USAGE,
  options: HELP_OPTION,
  async run({ args, env, io }) {
    const positionals = positionalArgs(
      { args, io },
      USAGE,
      2,
      'give a session id and a "question"',
    );
    if (!positionals) return EXIT.ok;
    const [id, question] = positionals as [string, string];
    if (!question.trim()) throw new UsageError("the question is empty");
    const channel = sessionChannel(id);
    const session = await callApi(env, {
      method: "GET",
      path: `/api/v1/sessions/${encodeURIComponent(id)}`,
      schema: SessionDetailSchema,
    });
    const printer = new TimelinePrinter((text) => io.out(text));
    const turn = new ChatTurn(new Set(session.stages.map((s) => s.id)), printer);
    let live = false;
    const code = await followChannel({
      wsUrl: env.wsUrl,
      channel,
      io,
      ...(env.user && { user: env.user }),
      ...(env.token && { token: env.token }),
      ...(env.cookie && { cookie: env.cookie }),
      // Earlier events are replayed first; the question is asked once they are through.
      async onConfirmed() {
        const answer = await callApi(env, {
          method: "POST",
          path: `/api/v1/sessions/${encodeURIComponent(id)}/chat/messages`,
          body: { content: question },
          schema: ChatMessageResponseSchema,
        });
        turn.chatId = answer.chat_id;
        turn.messageId = answer.message_id;
        live = true;
        turn.answered(answer.stage_id);
        return undefined;
      },
      onEvent(frame) {
        return live ? turn.onFrame({ kind: "event", event: frame.payload }) : undefined;
      },
      onChunk(frame) {
        return live ? turn.onFrame({ kind: "chunk", frame }) : undefined;
      },
    });
    printer.finish();
    return code;
  },
};
