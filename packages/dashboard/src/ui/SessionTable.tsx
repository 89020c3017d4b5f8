import {
  Box,
  Checkbox,
  Link as MuiLink,
  Paper,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TableSortLabel,
  Tooltip,
} from "@mui/material";
import { describeCancel, type SessionSummary } from "@tarsy/contracts";
import { memo, type ReactElement, useState } from "react";
import { Link as RouterLink } from "react-router";
import { type TableComponents, TableVirtuoso } from "react-virtuoso";
import type { ListState } from "../lib/url-state.ts";
import { CostText } from "./CostText.tsx";
import { useServices } from "./context.tsx";
import { formatDuration, formatTime } from "./format.ts";
import { LabelChips } from "./LabelChips.tsx";
import { ReviewCell, ScoreChip } from "./Review.tsx";
import { StatusChip, ToneChip } from "./StatusChip.tsx";

type SortField = ListState["sort_by"];

/** The first lines of a final analysis: what a tooltip has room for. */
export function firstLines(text: string, lines = 4, chars = 400): string {
  const head = text
    .split("\n")
    .filter((l) => l.trim())
    .slice(0, lines)
    .join("\n");
  return head.length > chars ? `${head.slice(0, chars - 1)}…` : head;
}

/**
 * A row's summary on hover or focus: the error of a failed session, who cancelled a cancelled
 * one and why, or the first lines of the final analysis (fetched the first time it opens).
 */
function SummaryTooltip(props: { session: SessionSummary; children: ReactElement }) {
  const { api } = useServices();
  const s = props.session;
  // A cancelled session: who cancelled it and why (older ones: "Cancelled"), never an error.
  const [summary, setSummary] = useState<string | null>(
    s.status === "cancelled" ? (describeCancel(s) ?? "Cancelled") : s.error_message,
  );
  const load = () => {
    if (summary !== null || !s.has_final_analysis) return;
    api.session(s.id).then(
      (d) => setSummary(firstLines(d.final_analysis || d.executive_summary || "")),
      () => setSummary("Summary unavailable"),
    );
  };
  const title = summary ?? (s.has_final_analysis ? "Loading summary…" : "No analysis yet");
  return (
    <Tooltip
      describeChild
      placement="bottom-start"
      onOpen={load}
      title={<span style={{ whiteSpace: "pre-line" }}>{title}</span>}
    >
      {props.children}
    </Tooltip>
  );
}

const components: TableComponents<SessionSummary> = {
  Table: (props) => (
    <Table
      {...props}
      size="small"
      className="sessions"
      aria-label="Sessions"
      sx={{ tableLayout: "fixed" }}
    />
  ),
  TableHead: (props) => <TableHead {...props} />,
  TableBody: (props) => <TableBody {...props} />,
  TableRow: ({ item, ...props }) => <TableRow {...props} hover data-session-id={item.id} />,
};

const COLUMNS: { label: string; sort?: SortField; width?: string }[] = [
  { label: "Status", sort: "status", width: "9%" },
  { label: "Alert type", sort: "alert_type", width: "14%" },
  { label: "Chain", width: "11%" },
  { label: "Project", width: "9%" },
  { label: "Created", sort: "created_at", width: "14%" },
  { label: "Duration", width: "7%" },
  { label: "Tokens", width: "7%" },
  { label: "Cost", width: "7%" },
  { label: "Score", width: "6%" },
  { label: "Review", width: "16%" },
];

/** The rows picked for a bulk review action (absent: the caller may review nothing). */
export interface Selection {
  selected: ReadonlySet<string>;
  toggle: (id: string) => void;
  /** Selects every shown row, or none when all are selected. */
  toggleAll: () => void;
}

/**
 * One row's cells. Memoised on the session object: the virtualiser renders its visible range
 * again on every scroll step, and only the rows that came into view should do any work.
 */
const SessionCells = memo(function SessionCells({
  session: s,
  selected,
  toggle,
}: {
  session: SessionSummary;
  selected: boolean | null;
  toggle: ((id: string) => void) | undefined;
}) {
  return (
    <>
      {selected !== null ? (
        <TableCell padding="checkbox">
          <Checkbox
            size="small"
            checked={selected}
            onChange={() => toggle?.(s.id)}
            slotProps={{ input: { "aria-label": `Select ${s.alert_type} ${s.id.slice(0, 8)}` } }}
          />
        </TableCell>
      ) : null}
      <TableCell>
        <StatusChip status={s.status} />
      </TableCell>
      <TableCell>
        <SummaryTooltip session={s}>
          <MuiLink component={RouterLink} to={`/sessions/${s.id}`}>
            {s.alert_type}
          </MuiLink>
        </SummaryTooltip>
        {s.has_action_stages ? (
          <Box component="span" sx={{ ml: 1 }}>
            <ToneChip label="Action" tone="info" title="this session has an action stage" />
          </Box>
        ) : null}
        {s.labels?.length ? (
          <Box sx={{ mt: 0.5 }}>
            <LabelChips labels={s.labels} />
          </Box>
        ) : null}
      </TableCell>
      <TableCell>{s.chain_id}</TableCell>
      <TableCell>{s.project}</TableCell>
      <TableCell>{formatTime(s.created_at)}</TableCell>
      <TableCell>{formatDuration(s.duration_ms)}</TableCell>
      <TableCell>{s.token_usage.total_tokens}</TableCell>
      <TableCell>
        <CostText cost={s.cost} />
      </TableCell>
      <TableCell>
        <ScoreChip score={s.latest_score} status={s.scoring_status} />
      </TableCell>
      <TableCell>
        <ReviewCell review={s} />
      </TableCell>
    </>
  );
});

/** The historical list: a virtualised table (a page of up to 1,000 rows stays smooth). */
export function SessionTable(props: {
  sessions: SessionSummary[];
  busy: boolean;
  state: ListState;
  sortBy: (field: SortField) => void;
  selection?: Selection | undefined;
}) {
  const { state, selection } = props;
  const all =
    props.sessions.length > 0 && props.sessions.every((s) => selection?.selected.has(s.id));
  const some = props.sessions.some((s) => selection?.selected.has(s.id));
  const header = () => (
    <TableRow sx={{ bgcolor: "background.paper" }}>
      {selection ? (
        <TableCell padding="checkbox" sx={{ width: "4%" }}>
          <Checkbox
            size="small"
            checked={all}
            indeterminate={some && !all}
            onChange={selection.toggleAll}
            slotProps={{ input: { "aria-label": "Select all shown sessions" } }}
          />
        </TableCell>
      ) : null}
      {COLUMNS.map((c) => {
        const active = c.sort !== undefined && state.sort_by === c.sort;
        const sort = c.sort;
        return (
          <TableCell
            key={c.label}
            sx={{ width: c.width, fontWeight: 600 }}
            sortDirection={active ? state.sort_order : false}
          >
            {sort ? (
              <TableSortLabel
                active={active}
                direction={active ? state.sort_order : "desc"}
                onClick={() => props.sortBy(sort)}
              >
                {c.label}
              </TableSortLabel>
            ) : (
              c.label
            )}
          </TableCell>
        );
      })}
    </TableRow>
  );
  return (
    <Paper variant="outlined" aria-busy={props.busy}>
      <TableVirtuoso
        useWindowScroll
        data={props.sessions}
        components={components}
        fixedHeaderContent={header}
        computeItemKey={(_, s) => s.id}
        itemContent={(_, s) => (
          <SessionCells
            session={s}
            selected={selection ? selection.selected.has(s.id) : null}
            toggle={selection?.toggle}
          />
        )}
      />
    </Paper>
  );
}
