import { type SessionDetail, TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { useState } from "react";
import { timelineItems } from "../lib/timeline.ts";
import { ChatPanel } from "./ChatPanel.tsx";
import { useServices } from "./context.tsx";
import { elapsedSince, formatDuration, prettyData } from "./format.ts";
import { useNow } from "./hooks.ts";
import { Markdown } from "./Markdown.tsx";
import { Link } from "./router.tsx";
import { StatusBadge } from "./SessionsPage.tsx";
import { StageTimeline } from "./Timeline.tsx";
import { useLiveSession } from "./useSession.ts";

function CancelButton(props: { sessionId: string; label: string; onDone: () => void }) {
  const { api } = useServices();
  const [state, setState] = useState<"idle" | "sending" | "sent" | string>("idle");
  const cancel = () => {
    setState("sending");
    api.cancel(props.sessionId).then(
      () => {
        setState("sent");
        props.onDone();
      },
      (err: Error) => setState(err.message),
    );
  };
  return (
    <>
      <button
        type="button"
        className="danger"
        onClick={cancel}
        disabled={state === "sending" || state === "sent"}
      >
        {state === "sent" ? "Cancel requested" : props.label}
      </button>
      {state !== "idle" && state !== "sending" && state !== "sent" ? (
        <span role="alert" className="error">
          {state}
        </span>
      ) : null}
    </>
  );
}

export function SessionPage(props: { sessionId: string }) {
  const { detail, timeline, error, reload } = useLiveSession(props.sessionId);
  const now = useNow();
  if (error && !detail) {
    return (
      <section>
        <h1>Session</h1>
        <p role="alert" className="error">
          Could not load session {props.sessionId}: {error.message}
        </p>
      </section>
    );
  }
  if (!detail) return <p aria-busy="true">Loading session…</p>;
  const terminal = TERMINAL_SESSION_STATUSES.includes(detail.status);
  const items = timelineItems(timeline);
  const chatStageIds = new Set(detail.stages.filter((s) => s.kind === "chat").map((s) => s.id));
  const stages = detail.stages.filter((s) => s.kind !== "chat");
  const unstaged = items.filter(
    (i) => !i.stage_id || !detail.stages.some((s) => s.id === i.stage_id),
  );
  const tokens = detail.token_usage;
  return (
    <article className="session" aria-labelledby="session-h">
      <header className="session-head">
        <h1 id="session-h">
          {detail.alert_type} <StatusBadge status={detail.status} />
        </h1>
        <p className="muted">
          Chain <code>{detail.chain_id}</code> · session <code>{detail.id}</code> ·{" "}
          {terminal
            ? formatDuration(detail.duration_ms)
            : `running ${elapsedSince(detail.started_at ?? detail.created_at, now)}`}
        </p>
        <dl className="tokens" aria-label="Token usage">
          <div>
            <dt>Input</dt>
            <dd>{tokens.input_tokens}</dd>
          </div>
          <div>
            <dt>Output</dt>
            <dd>{tokens.output_tokens}</dd>
          </div>
          <div>
            <dt>Thinking</dt>
            <dd>{tokens.thinking_tokens}</dd>
          </div>
          <div>
            <dt>Total</dt>
            <dd>{tokens.total_tokens}</dd>
          </div>
        </dl>
        <div className="actions">
          <Link to={`/sessions/${detail.id}/trace`} className="button">
            Trace
          </Link>
          {!terminal ? (
            <CancelButton sessionId={detail.id} label="Cancel session" onDone={reload} />
          ) : null}
        </div>
        {detail.error_message ? (
          <p role="alert" className="error">
            {detail.error_message}
          </p>
        ) : null}
        <RunbookInfo detail={detail} />
      </header>

      <details className="alert-data">
        <summary>Alert data</summary>
        <pre>{prettyData(detail.alert_data)}</pre>
      </details>

      <ol className="stages" aria-label="Stages">
        {stages.map((s) => (
          <li key={s.id} className={`stage-pill status-${s.status}`}>
            {s.stage_index}. {s.stage_name} <span className="muted">({s.status})</span>
          </li>
        ))}
      </ol>

      <section aria-label="Timeline" className="timeline-wrap">
        <h2>Timeline</h2>
        {stages.map((stage) => {
          const own = items.filter((i) => i.stage_id === stage.id);
          if (own.length === 0 && stage.status === "pending") return null;
          return (
            <section key={stage.id} className="stage" aria-label={`Stage ${stage.stage_name}`}>
              <h3>
                {stage.stage_index}. {stage.stage_name} <StatusBadge status={stage.status} />
              </h3>
              {stage.error_message ? <p className="error">{stage.error_message}</p> : null}
              <StageTimeline stage={stage} items={own} />
            </section>
          );
        })}
        {unstaged.length > 0 ? <StageTimeline stage={null} items={unstaged} /> : null}
        {!terminal && items.length === 0 ? (
          <p className="muted" aria-busy="true">
            Waiting for the first event…
          </p>
        ) : null}
      </section>

      {detail.final_analysis ? (
        <section className="result" aria-labelledby="fa-h">
          <h2 id="fa-h">Final analysis</h2>
          <Markdown text={detail.final_analysis} label="Final analysis" />
        </section>
      ) : null}
      {detail.executive_summary ? (
        <section className="result" aria-labelledby="es-h">
          <h2 id="es-h">Executive summary</h2>
          <Markdown text={detail.executive_summary} label="Executive summary" />
        </section>
      ) : detail.executive_summary_error ? (
        <p className="muted">Executive summary unavailable: {detail.executive_summary_error}</p>
      ) : null}

      {detail.chat_enabled && terminal ? (
        <ChatPanel
          detail={detail}
          items={items.filter((i) => i.stage_id && chatStageIds.has(i.stage_id))}
          onChange={reload}
          cancel={(label) => <CancelButton sessionId={detail.id} label={label} onDone={reload} />}
        />
      ) : null}
    </article>
  );
}

const RUNBOOK_SOURCES = {
  fetched: "fetched",
  default: "default runbook",
  none: "no runbook",
} as const;

/** Which runbook the agents used: the URL, whether it was fetched or fell back (and why), the text. */
function RunbookInfo(props: { detail: SessionDetail }) {
  const { runbook_url: url, runbook } = props.detail;
  if (!url && !runbook) return null;
  return (
    <section className="runbook" aria-label="Runbook">
      <p>
        Runbook:{" "}
        {url ? (
          <a href={url} rel="noreferrer" target="_blank">
            {url}
          </a>
        ) : (
          "default"
        )}{" "}
        {runbook ? (
          <span className={`badge runbook-${runbook.source}`} data-testid="runbook-source">
            {RUNBOOK_SOURCES[runbook.source]}
          </span>
        ) : (
          <span className="muted">(not resolved yet)</span>
        )}
      </p>
      {runbook?.error ? (
        <p className="error">Could not fetch the runbook: {runbook.error}</p>
      ) : null}
      {runbook?.content ? (
        <details>
          <summary>Runbook used</summary>
          <pre className="text">{runbook.content}</pre>
        </details>
      ) : null}
    </section>
  );
}
