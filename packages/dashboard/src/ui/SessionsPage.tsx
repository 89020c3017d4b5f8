import { Alert, TablePagination, Typography } from "@mui/material";
import { useState } from "react";
import { projectsWith, visibleProjects } from "../lib/access.ts";
import { REVIEW_PERMISSION } from "../lib/review.ts";
import { formatListState, type ListState, parseListState } from "../lib/url-state.ts";
import { ActiveSessions } from "./ActiveSessions.tsx";
import { BulkReviewBar } from "./BulkReview.tsx";
import { useAccess, useLoad, useServices } from "./context.tsx";
import { useChannel, useThrottled } from "./hooks.ts";
import { navigate } from "./router.tsx";
import { SessionFilters } from "./SessionFilters.tsx";
import { SessionTable } from "./SessionTable.tsx";

const PAGE_SIZES = [10, 25, 50, 100, 200, 1000];

export function SessionsPage(props: { search: string }) {
  const { api } = useServices();
  const access = useAccess();
  const state = parseListState(props.search);
  const key = formatListState(state);
  const list = useLoad(() => api.listSessions(state), [key]);
  const active = useLoad(() => api.activeSessions(), []);
  const options = useLoad(() => api.filterOptions(), []);
  const chains = useLoad(() => api.alertTypes(), []);
  const refresh = useThrottled(() => {
    list.reload();
    active.reload();
  }, 500);
  // Sessions deleted since the last load: dropped at once, before the refresh confirms it.
  const [deleted, setDeleted] = useState<ReadonlySet<string>>(() => new Set());
  useChannel("sessions", {
    onEvent: (frame) => {
      if (frame.payload.type === "session.deleted") {
        const id = frame.payload.session_id;
        setDeleted((gone) => new Set(gone).add(id));
      }
      refresh();
    },
    onOverflow: refresh,
    onConfirmed: refresh,
  });
  const [selected, setSelected] = useState<ReadonlySet<string>>(() => new Set());
  const shown = <T extends { id: string }>(sessions: readonly T[]): T[] =>
    sessions.filter((s) => !deleted.has(s.id));

  const update = (patch: Partial<ListState>) => {
    const next = formatListState({ ...state, page: 1, ...patch });
    navigate(next ? `/?${next}` : "/", true);
  };
  const sortBy = (field: ListState["sort_by"]) =>
    update({
      sort_by: field,
      sort_order: state.sort_by === field && state.sort_order === "desc" ? "asc" : "desc",
      page: state.page,
    });

  const pagination = list.data?.pagination;
  const sessions = shown(list.data?.sessions ?? []);
  // Bulk review is offered to a caller who may review somewhere (the API decides per session).
  const mayReview = projectsWith(access, REVIEW_PERMISSION).length > 0;
  const selection = mayReview
    ? {
        selected,
        toggle: (id: string) =>
          setSelected((cur) => {
            const next = new Set(cur);
            if (!next.delete(id)) next.add(id);
            return next;
          }),
        toggleAll: () =>
          setSelected((cur) =>
            sessions.every((s) => cur.has(s.id)) ? new Set() : new Set(sessions.map((s) => s.id)),
          ),
      }
    : undefined;
  return (
    <section>
      <Typography variant="h1" gutterBottom>
        Sessions
      </Typography>
      {active.data ? (
        <ActiveSessions
          active={shown(active.data.active)}
          queued={shown(active.data.queued)}
          chains={chains.data?.chains ?? null}
        />
      ) : null}
      <SessionFilters
        state={state}
        options={options.data}
        projects={visibleProjects(access)}
        update={update}
        clear={key !== "" ? () => navigate("/", true) : null}
      />
      {list.error ? (
        <Alert severity="error" sx={{ mb: 2 }}>
          Could not load sessions: {list.error.message}
        </Alert>
      ) : null}
      {mayReview ? (
        <BulkReviewBar
          selected={selected}
          sessions={sessions}
          clear={() => setSelected(new Set())}
          onDone={list.reload}
        />
      ) : null}
      <SessionTable
        sessions={sessions}
        busy={!list.data}
        state={state}
        sortBy={sortBy}
        selection={selection}
      />
      {list.data && list.data.sessions.length === 0 ? (
        <Typography color="text.secondary" sx={{ p: 2 }}>
          No sessions match.
        </Typography>
      ) : null}
      {pagination ? (
        <TablePagination
          component="nav"
          aria-label="Pagination"
          count={pagination.total}
          page={Math.max(0, state.page - 1)}
          rowsPerPage={state.page_size}
          rowsPerPageOptions={PAGE_SIZES}
          onPageChange={(_, page) => update({ page: page + 1 })}
          onRowsPerPageChange={(e) => update({ page_size: Number(e.target.value) })}
          labelRowsPerPage="Per page"
          slotProps={{ select: { native: true, inputProps: { "aria-label": "Per page" } } }}
        />
      ) : null}
    </section>
  );
}
