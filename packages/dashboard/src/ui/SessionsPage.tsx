import { type SessionStatus, SessionStatusSchema, type SessionSummary } from "@tarsy/contracts";
import { useEffect, useState } from "react";
import { formatListState, type ListState, parseListState } from "../lib/url-state.ts";
import { useLoad, useServices } from "./context.tsx";
import { elapsedSince, formatDuration, formatTime } from "./format.ts";
import { useChannel, useNow, useThrottled } from "./hooks.ts";
import { Link, navigate } from "./router.tsx";

export function StatusBadge(props: { status: string }) {
  return <span className={`badge status-${props.status}`}>{props.status.replace("_", " ")}</span>;
}

function ActivePanels(props: { active: SessionSummary[]; queued: SessionSummary[] }) {
  const now = useNow();
  return (
    <div className="panels">
      <section aria-labelledby="active-h" className="panel">
        <h2 id="active-h">Active ({props.active.length})</h2>
        {props.active.length === 0 ? <p className="muted">Nothing running.</p> : null}
        <ul>
          {props.active.map((s) => (
            <li key={s.id}>
              <Link to={`/sessions/${s.id}`}>{s.alert_type}</Link> <StatusBadge status={s.status} />
              <span className="muted">
                {" "}
                stage {s.current_stage_index ?? "—"}: {s.current_stage_name ?? "starting"} ·{" "}
                {elapsedSince(s.started_at ?? s.created_at, now)}
              </span>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="queued-h" className="panel">
        <h2 id="queued-h">Queued ({props.queued.length})</h2>
        {props.queued.length === 0 ? <p className="muted">Queue empty.</p> : null}
        <ul>
          {props.queued.map((s) => (
            <li key={s.id}>
              <Link to={`/sessions/${s.id}`}>{s.alert_type}</Link>{" "}
              <span className="muted">waiting {elapsedSince(s.created_at, now)}</span>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}

export function SessionsPage(props: { search: string }) {
  const { api } = useServices();
  const state = parseListState(props.search);
  const key = formatListState(state);
  const list = useLoad(() => api.listSessions(state), [key]);
  const active = useLoad(() => api.activeSessions(), []);
  const options = useLoad(() => api.filterOptions(), []);
  const [searchText, setSearchText] = useState(state.search);
  const refresh = useThrottled(() => {
    list.reload();
    active.reload();
  }, 500);
  useChannel("sessions", { onEvent: refresh, onOverflow: refresh, onConfirmed: refresh });

  const update = (patch: Partial<ListState>) => {
    const next = formatListState({ ...state, page: 1, ...patch });
    navigate(next ? `/?${next}` : "/", true);
  };
  // Search as you type, after a pause; fewer than 3 characters searches nothing.
  useEffect(() => {
    if (searchText === state.search) return;
    const t = setTimeout(() => update({ search: searchText }), 300);
    return () => clearTimeout(t);
  });
  const toggleStatus = (s: SessionStatus) =>
    update({
      status: state.status.includes(s) ? state.status.filter((x) => x !== s) : [...state.status, s],
    });
  const sortBy = (field: ListState["sort_by"]) =>
    update({
      sort_by: field,
      sort_order: state.sort_by === field && state.sort_order === "desc" ? "asc" : "desc",
      page: state.page,
    });
  const sortMark = (field: ListState["sort_by"]) =>
    state.sort_by === field ? (state.sort_order === "asc" ? "ascending" : "descending") : "none";

  const pagination = list.data?.pagination;
  return (
    <section>
      <h1>Sessions</h1>
      {active.data ? (
        <ActivePanels active={active.data.active} queued={active.data.queued} />
      ) : null}
      <form className="filters" aria-label="Filter sessions" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input
            type="search"
            value={searchText}
            placeholder="alert data, analysis… (3+ chars)"
            onChange={(e) => setSearchText(e.target.value)}
          />
        </label>
        <label>
          Alert type
          <select value={state.alert_type} onChange={(e) => update({ alert_type: e.target.value })}>
            <option value="">All</option>
            {options.data?.alert_types.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Chain
          <select value={state.chain_id} onChange={(e) => update({ chain_id: e.target.value })}>
            <option value="">All</option>
            {options.data?.chain_ids.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          From
          <input
            type="datetime-local"
            value={state.from}
            onChange={(e) => update({ from: e.target.value })}
          />
        </label>
        <label>
          To
          <input
            type="datetime-local"
            value={state.to}
            onChange={(e) => update({ to: e.target.value })}
          />
        </label>
        <fieldset>
          <legend>Status</legend>
          {SessionStatusSchema.options.map((s) => (
            <label key={s} className="check">
              <input
                type="checkbox"
                checked={state.status.includes(s)}
                onChange={() => toggleStatus(s)}
              />
              {s.replace("_", " ")}
            </label>
          ))}
        </fieldset>
        {key !== "" ? (
          <button
            type="button"
            className="ghost"
            onClick={() => {
              setSearchText("");
              navigate("/", true);
            }}
          >
            Clear filters
          </button>
        ) : null}
      </form>
      {list.error ? (
        <p role="alert" className="error">
          Could not load sessions: {list.error.message}
        </p>
      ) : null}
      <table className="sessions" aria-label="Sessions" aria-busy={!list.data}>
        <thead>
          <tr>
            <th aria-sort={sortMark("status")}>
              <button type="button" className="th" onClick={() => sortBy("status")}>
                Status
              </button>
            </th>
            <th aria-sort={sortMark("alert_type")}>
              <button type="button" className="th" onClick={() => sortBy("alert_type")}>
                Alert type
              </button>
            </th>
            <th>Chain</th>
            <th aria-sort={sortMark("created_at")}>
              <button type="button" className="th" onClick={() => sortBy("created_at")}>
                Created
              </button>
            </th>
            <th>Duration</th>
            <th>Tokens</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.sessions.map((s) => (
            <tr key={s.id} data-session-id={s.id}>
              <td>
                <StatusBadge status={s.status} />
              </td>
              <td>
                <Link to={`/sessions/${s.id}`}>{s.alert_type}</Link>
              </td>
              <td>{s.chain_id}</td>
              <td>{formatTime(s.created_at)}</td>
              <td>{formatDuration(s.duration_ms)}</td>
              <td>{s.token_usage.total_tokens}</td>
            </tr>
          ))}
          {list.data && list.data.sessions.length === 0 ? (
            <tr>
              <td colSpan={6} className="muted">
                No sessions match.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      {pagination ? (
        <nav className="pager" aria-label="Pagination">
          <button
            type="button"
            disabled={state.page <= 1}
            onClick={() => update({ page: state.page - 1 })}
          >
            Previous
          </button>
          <span>
            Page {pagination.page} of {Math.max(1, pagination.total_pages)} · {pagination.total}{" "}
            sessions
          </span>
          <button
            type="button"
            disabled={state.page >= pagination.total_pages}
            onClick={() => update({ page: state.page + 1 })}
          >
            Next
          </button>
          <label>
            Per page
            <select
              value={state.page_size}
              onChange={(e) => update({ page_size: Number(e.target.value) })}
            >
              {[10, 25, 50, 100].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        </nav>
      ) : null}
    </section>
  );
}
