import type { SessionDetail } from "@tarsy/contracts";
import { useState } from "react";
import { groupByExecution, type TimelineItem } from "../lib/timeline.ts";
import { prettyJson } from "./format.ts";
import { Markdown } from "./Markdown.tsx";

const LABELS: Record<TimelineItem["event_type"], string> = {
  llm_thinking: "Thinking",
  llm_response: "Response",
  llm_tool_call: "Tool call",
  mcp_tool_summary: "Tool result summary",
  error: "Error",
  user_question: "Question",
  executive_summary: "Executive summary",
  final_analysis: "Final analysis",
  code_execution: "Code execution",
  google_search_result: "Search result",
  url_context_result: "URL context",
  provider_fallback: "Provider fallback",
};

type Execution = SessionDetail["stages"][number]["executions"][number];

/** The provider an execution runs on, and the one it started with when it fell back. */
function ExecutionProvider(props: { execution: Execution | undefined }) {
  const e = props.execution;
  if (!e?.llm_provider) return null;
  return (
    <p className="execution-provider" data-execution-id={e.id}>
      LLM: <code>{e.llm_provider}</code>
      {e.llm_backend ? ` (${e.llm_backend})` : ""}
      {e.original_llm_provider ? (
        <span className="badge status-fallback" title="switched after the provider kept failing">
          fell back from {e.original_llm_provider}
          {e.original_llm_backend ? ` (${e.original_llm_backend})` : ""}
        </span>
      ) : null}
    </p>
  );
}

function ProviderFallback(props: { item: TimelineItem }) {
  const meta = props.item.metadata ?? {};
  const skipped = Array.isArray(meta.skipped_incompatible) ? meta.skipped_incompatible : [];
  return (
    <div className="provider-fallback">
      <p>
        <code>{String(meta.original_provider ?? "?")}</code> →{" "}
        <code>{String(meta.fallback_provider ?? "?")}</code>
        {meta.fallback_backend ? ` (${String(meta.fallback_backend)})` : ""}
      </p>
      {meta.reason ? <pre className="text">{String(meta.reason)}</pre> : null}
      {skipped.length > 0 ? (
        <p>Skipped (no Gemini native tools): {skipped.map(String).join(", ")}</p>
      ) : null}
    </div>
  );
}

const LONG = 600;

function ToolCall(props: { item: TimelineItem }) {
  const meta = props.item.metadata ?? {};
  const name = [meta.server_name ?? meta.server, meta.tool_name ?? meta.tool]
    .filter(Boolean)
    .join(".");
  const args = meta.arguments ?? meta.tool_arguments;
  const body = props.item.content;
  const long = body.length > LONG;
  return (
    <details open={!long}>
      <summary>
        <code>{name || "tool"}</code>{" "}
        {props.item.status === "streaming" ? "running…" : props.item.status}
      </summary>
      {args !== undefined ? (
        <>
          <h4>Arguments</h4>
          <pre>{prettyJson(args)}</pre>
        </>
      ) : null}
      {body ? (
        <>
          <h4>{meta.is_error ? "Error" : "Result"}</h4>
          <pre>{body}</pre>
        </>
      ) : null}
    </details>
  );
}

function Entry(props: { item: TimelineItem }) {
  const { item } = props;
  const streaming = item.status === "streaming";
  return (
    <li
      className={`entry entry-${item.event_type} entry-status-${item.status}`}
      data-event-id={item.event_id}
      data-event-type={item.event_type}
      aria-busy={streaming}
    >
      <div className="entry-head">
        <span className="kind">
          {item.metadata?.kind === "runbook_fallback" ? "Runbook" : LABELS[item.event_type]}
        </span>
        {streaming ? (
          <span className="streaming" role="img" aria-label="streaming">
            ●
          </span>
        ) : null}
        {streaming && item.retries ? (
          <span className="badge status-retrying" title="the LLM call was cut and is retried">
            retried{item.retries > 1 ? ` ×${item.retries}` : ""}
          </span>
        ) : null}
        {item.status !== "completed" && !streaming ? (
          <span className={`badge status-${item.status}`}>{item.status}</span>
        ) : null}
      </div>
      {item.event_type === "llm_tool_call" ? (
        <ToolCall item={item} />
      ) : item.event_type === "provider_fallback" ? (
        <ProviderFallback item={item} />
      ) : item.event_type === "final_analysis" || item.event_type === "executive_summary" ? (
        <Markdown text={item.content} />
      ) : item.content.length > LONG * 3 && !streaming ? (
        <details>
          <summary>{item.content.slice(0, 160)}…</summary>
          <pre className="text">{item.content}</pre>
        </details>
      ) : (
        <pre className={`text ${item.event_type === "llm_thinking" ? "thinking" : ""}`}>
          {item.content}
        </pre>
      )}
    </li>
  );
}

export function EntryList(props: { items: TimelineItem[]; label: string }) {
  return (
    <ol className="timeline" aria-label={props.label}>
      {props.items.map((item) => (
        <Entry key={item.event_id} item={item} />
      ))}
    </ol>
  );
}

/**
 * One stage's events; parallel agents side by side, as tabs on narrow screens. Session-level
 * events (the executive summary and its provider fallback) are one list.
 */
export function StageTimeline(props: {
  stage: SessionDetail["stages"][number] | null;
  items: TimelineItem[];
}) {
  const groups = groupByExecution(props.stage ? props.items : []);
  const executions = new Map(props.stage?.executions.map((e) => [e.id, e]) ?? []);
  const names = new Map(props.stage?.executions.map((e) => [e.id, e.agent_name]) ?? []);
  const keys = [...groups.keys()];
  const [tab, setTab] = useState<string | null>(null);
  if (keys.length <= 1) {
    return (
      <>
        <ExecutionProvider
          execution={executions.get(keys[0] ?? "") ?? props.stage?.executions[0]}
        />
        <EntryList items={props.items} label={`${props.stage?.stage_name ?? "Session"} timeline`} />
      </>
    );
  }
  const selected = tab && groups.has(tab) ? tab : keys[0];
  return (
    <div className="parallel">
      <div role="tablist" aria-label="Parallel agents" className="tabs">
        {keys.map((k) => (
          <button
            key={k}
            type="button"
            role="tab"
            aria-selected={k === selected}
            onClick={() => setTab(k)}
          >
            {names.get(k) ?? k}
          </button>
        ))}
      </div>
      <div className="columns">
        {keys.map((k) => (
          <section
            key={k}
            className={`column ${k === selected ? "selected" : ""}`}
            aria-label={`Agent ${names.get(k) ?? k}`}
          >
            <h4>{names.get(k) ?? k}</h4>
            <ExecutionProvider execution={executions.get(k)} />
            <EntryList items={groups.get(k) ?? []} label={`${names.get(k) ?? k} timeline`} />
          </section>
        ))}
      </div>
    </div>
  );
}
