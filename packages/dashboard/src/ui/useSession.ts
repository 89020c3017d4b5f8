import { type SessionDetail, TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import { EMPTY_TIMELINE, type TimelineState, timelineReducer } from "../lib/timeline.ts";
import { useServices } from "./context.tsx";
import { useChannel, useThrottled } from "./hooks.ts";

export interface LiveSession {
  detail: SessionDetail | null;
  timeline: TimelineState;
  error: Error | null;
  /** The session was deleted while the page was open (its `session.deleted` arrived). */
  deleted: boolean;
  reload: () => void;
}

/**
 * A session as REST reports it, kept current by its live channel: timeline events go through
 * the reducer, chunks stream into their event, status changes (and events of an execution the
 * detail does not list yet, such as a sub-agent just dispatched) refetch the detail, and an
 * overflow reloads both over REST.
 */
export function useLiveSession(sessionId: string): LiveSession {
  const { api } = useServices();
  const [detail, setDetail] = useState<SessionDetail | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [deleted, setDeleted] = useState(false);
  const [timeline, dispatch] = useReducer(timelineReducer, EMPTY_TIMELINE);
  /** The executions the detail lists: an event naming another one refetches it. */
  const known = useRef<ReadonlySet<string>>(new Set());

  const loadDetail = useCallback(() => {
    api.session(sessionId).then(
      (d) => {
        known.current = new Set(d.stages.flatMap((s) => s.executions.map((e) => e.id)));
        setDetail(d);
        setError(null);
      },
      (err: Error) => setError(err),
    );
  }, [api, sessionId]);
  const loadTimeline = useCallback(() => {
    api.timeline(sessionId).then(
      (t) => dispatch({ kind: "loaded", timeline: t }),
      (err: Error) => setError(err),
    );
  }, [api, sessionId]);
  const refreshDetail = useThrottled(loadDetail, 250);

  useEffect(() => {
    loadDetail();
    loadTimeline();
  }, [loadDetail, loadTimeline]);

  useChannel(`session:${sessionId}`, {
    onEvent: (frame) => {
      const event = frame.payload;
      switch (event.type) {
        case "timeline_event.created":
          dispatch({ kind: "created", event });
          // A sub-agent just dispatched (its task), or one that ended (its result on the
          // parent's timeline): the execution list says who it is and how it stands.
          if (
            (event.execution_id && !known.current.has(event.execution_id)) ||
            event.event_type === "task_assigned" ||
            event.event_type === "sub_agent_result"
          ) {
            refreshDetail();
          }
          return;
        case "timeline_event.completed":
          dispatch({ kind: "completed", event });
          // Final analysis, summary and token totals live on the session (and a sub-agent's
          // status, duration and tokens on its execution).
          if (
            event.event_type === "final_analysis" ||
            event.event_type === "executive_summary" ||
            event.event_type === "error" ||
            (event.execution_id && !known.current.has(event.execution_id))
          ) {
            refreshDetail();
          }
          return;
        case "session.status":
          // A stopped session may leave events it never finished: take the stored state.
          if (TERMINAL_SESSION_STATUSES.includes(event.status)) loadTimeline();
          refreshDetail();
          return;
        case "session.deleted":
          // Nothing more will come, and REST answers 404 from now on: say so instead.
          setDeleted(true);
          return;
        case "stage.status":
        case "chat.created":
        case "chat.user_message":
        case "review.status":
        case "session.score_updated":
        case "action.status":
          refreshDetail();
          return;
        default: {
          const unreachable: never = event;
          throw new Error(`unhandled event ${JSON.stringify(unreachable)}`);
        }
      }
    },
    onChunk: (frame) => dispatch({ kind: "chunk", chunk: frame.payload }),
    onOverflow: () => {
      loadDetail();
      loadTimeline();
    },
  });

  return {
    detail,
    timeline,
    error,
    deleted,
    reload: () => {
      loadDetail();
      loadTimeline();
    },
  };
}
