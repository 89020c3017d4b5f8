import ExpandMoreIcon from "@mui/icons-material/ExpandMore";
import {
  Accordion,
  AccordionDetails,
  AccordionSummary,
  Alert,
  Button,
  Chip,
  Link as MuiLink,
  Pagination,
  Snackbar,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  ToggleButton,
  ToggleButtonGroup,
  Tooltip,
  Typography,
} from "@mui/material";
import type { SessionSummary, TriageGroup, UpdateReviewRequest } from "@tarsy/contracts";
import { useState } from "react";
import { Link as RouterLink } from "react-router";
import { can } from "../lib/access.ts";
import { REVIEW_PERMISSION, TRIAGE_GROUPS } from "../lib/review.ts";
import { useAccess, useLoad, useServices } from "./context.tsx";
import { formatTime } from "./format.ts";
import { useChannel, useThrottled } from "./hooks.ts";
import {
  FeedbackDialog,
  feedbackFields,
  feedbackOf,
  RatingButtons,
  ReviewCell,
  ScoreChip,
  useReviewRequest,
} from "./Review.tsx";
import { navigate } from "./router.tsx";
import { StatusChip } from "./StatusChip.tsx";

const PAGE_SIZE = 20;
type Who = "all" | "mine" | "unassigned";
const WHO_LABELS: Record<Who, string> = { mine: "Mine", unassigned: "Unassigned", all: "All" };

function parseWho(search: string): Who {
  const v = new URLSearchParams(search).get("assignee");
  return v === "mine" || v === "unassigned" ? v : "all";
}

/** What a row's buttons do; each runs one review request for the row's session. */
interface RowActions {
  run: (session: SessionSummary, body: Omit<UpdateReviewRequest, "session_ids">) => Promise<void>;
  acknowledge: (session: SessionSummary) => void;
  edit: (session: SessionSummary, mode: "complete" | "edit") => void;
}

const label = (s: SessionSummary) => `${s.alert_type} · ${s.id.slice(0, 8)}`;

function TriageRow(props: {
  session: SessionSummary;
  group: TriageGroup;
  actions: RowActions;
  mayReview: boolean;
}) {
  const { session: s, group, actions } = props;
  const [busy, setBusy] = useState(false);
  const act = (body: Omit<UpdateReviewRequest, "session_ids">) => {
    setBusy(true);
    void actions.run(s, body).finally(() => setBusy(false));
  };
  const name = label(s);
  return (
    <TableRow hover data-session-id={s.id}>
      <TableCell>
        <MuiLink component={RouterLink} to={`/sessions/${s.id}`}>
          {name}
        </MuiLink>
      </TableCell>
      <TableCell>
        <StatusChip status={s.status} />
      </TableCell>
      <TableCell>
        <ScoreChip score={s.latest_score} status={s.scoring_status} />
      </TableCell>
      <TableCell>
        <ReviewCell review={s} />
      </TableCell>
      <TableCell>{formatTime(s.completed_at ?? s.created_at)}</TableCell>
      <TableCell align="right">
        {props.mayReview ? (
          <Stack
            direction="row"
            spacing={0.5}
            sx={{ justifyContent: "flex-end", alignItems: "center" }}
          >
            {group === "needs_review" ? (
              <>
                <Button size="small" disabled={busy} onClick={() => act({ action: "claim" })}>
                  Claim
                </Button>
                <Tooltip title="Acknowledge: reviewed, without a rating">
                  <Button
                    size="small"
                    disabled={busy}
                    onClick={() => actions.acknowledge(s)}
                    aria-label={`Ack ${name}`}
                  >
                    Ack
                  </Button>
                </Tooltip>
              </>
            ) : null}
            {group === "in_progress" ? (
              <Button size="small" disabled={busy} onClick={() => act({ action: "unclaim" })}>
                Unclaim
              </Button>
            ) : null}
            {group === "needs_review" || group === "in_progress" ? (
              <RatingButtons
                disabled={busy}
                about={name}
                onRate={(rating) => act({ action: "complete", quality_rating: rating })}
              />
            ) : null}
            {group === "reviewed" ? (
              <>
                <Button size="small" disabled={busy} onClick={() => act({ action: "reopen" })}>
                  Reopen
                </Button>
                <Button
                  size="small"
                  disabled={busy}
                  onClick={() => actions.edit(s, "edit")}
                  aria-label={`Edit feedback of ${name}`}
                >
                  Edit
                </Button>
              </>
            ) : null}
          </Stack>
        ) : null}
      </TableCell>
    </TableRow>
  );
}

function TriageSection(props: {
  group: TriageGroup;
  title: string;
  assignee: string | undefined;
  tick: number;
  actions: RowActions;
  mayReview: (project: string) => boolean;
}) {
  const { api } = useServices();
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState(props.group !== "reviewed");
  const data = useLoad(
    () => api.triageGroup(props.group, { page, page_size: PAGE_SIZE, assignee: props.assignee }),
    [props.group, page, props.assignee, props.tick],
  );
  const id = `triage-${props.group}`;
  return (
    <Accordion
      expanded={open}
      onChange={(_, v) => setOpen(v)}
      disableGutters
      variant="outlined"
      data-group={props.group}
      slotProps={{ heading: { component: "h2" } }}
    >
      <AccordionSummary expandIcon={<ExpandMoreIcon />} aria-controls={`${id}-content`} id={id}>
        <Typography component="span" sx={{ fontWeight: 600, mr: 1 }}>
          {props.title}
        </Typography>
        <Chip size="small" label={data.data?.count ?? "…"} data-testid={`${id}-count`} />
      </AccordionSummary>
      <AccordionDetails id={`${id}-content`} sx={{ p: 0 }}>
        {data.error ? (
          <Alert severity="error" sx={{ m: 1 }}>
            Could not load: {data.error.message}
          </Alert>
        ) : null}
        {data.data && data.data.sessions.length === 0 ? (
          <Typography color="text.secondary" sx={{ p: 2 }}>
            Nothing here.
          </Typography>
        ) : null}
        {data.data && data.data.sessions.length > 0 ? (
          <Table size="small" aria-label={props.title}>
            <TableHead>
              <TableRow>
                <TableCell sx={{ width: "26%" }}>Session</TableCell>
                <TableCell sx={{ width: "10%" }}>Status</TableCell>
                <TableCell sx={{ width: "7%" }}>Score</TableCell>
                <TableCell sx={{ width: "22%" }}>Review</TableCell>
                <TableCell sx={{ width: "15%" }}>Ended</TableCell>
                <TableCell align="right">Actions</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {data.data.sessions.map((s) => (
                <TriageRow
                  key={s.id}
                  session={s}
                  group={props.group}
                  actions={props.actions}
                  mayReview={props.mayReview(s.project)}
                />
              ))}
            </TableBody>
          </Table>
        ) : null}
        {data.data && data.data.total_pages > 1 ? (
          <Pagination
            count={data.data.total_pages}
            page={page}
            onChange={(_, p) => setPage(p)}
            size="small"
            sx={{ p: 1 }}
            aria-label={`${props.title} pages`}
          />
        ) : null}
      </AccordionDetails>
    </Accordion>
  );
}

/**
 * The triage view (the Go TARSy's TriageView): running sessions and the three review states as
 * collapsible groups, each paged, with the row actions a reviewer needs; live from the sessions
 * channel.
 */
export function TriagePage(props: { search: string }) {
  const access = useAccess();
  const request = useReviewRequest();
  const who = parseWho(props.search);
  const me = access.status === "ready" ? access.me.user : null;
  const assignee = who === "all" ? undefined : who === "unassigned" ? "" : (me ?? undefined);
  const [tick, setTick] = useState(0);
  const refresh = useThrottled(() => setTick((t) => t + 1), 300);
  useChannel("sessions", {
    onEvent: (frame) => {
      const t = frame.payload.type;
      if (
        t === "review.status" ||
        t === "session.status" ||
        t === "session.score_updated" ||
        t === "session.deleted"
      ) {
        refresh();
      }
    },
    onOverflow: refresh,
    onConfirmed: refresh,
  });
  const [error, setError] = useState<string | null>(null);
  const [undo, setUndo] = useState<SessionSummary | null>(null);
  const [editing, setEditing] = useState<{
    session: SessionSummary;
    mode: "complete" | "edit";
  } | null>(null);
  const run: RowActions["run"] = async (session, body) => {
    setError(null);
    try {
      await request({ session_ids: [session.id], ...body });
    } catch (err) {
      setError(`${label(session)}: ${(err as Error).message}`);
    }
    refresh();
  };
  const actions: RowActions = {
    run,
    acknowledge: (session) => {
      void run(session, { action: "acknowledge" }).then(() => setUndo(session));
    },
    edit: (session, mode) => setEditing({ session, mode }),
  };
  return (
    <section>
      <Stack direction="row" sx={{ alignItems: "center", mb: 2, gap: 2, flexWrap: "wrap" }}>
        <Typography variant="h1" sx={{ flexGrow: 1 }}>
          Triage
        </Typography>
        <ToggleButtonGroup
          size="small"
          exclusive
          value={who}
          aria-label="Assignee"
          onChange={(_, v: Who | null) => {
            if (v) navigate(v === "all" ? "/triage" : `/triage?assignee=${v}`, true);
          }}
          sx={{ "& .MuiToggleButton-root": { textTransform: "none", px: 1.5 } }}
        >
          {(["mine", "unassigned", "all"] as const).map((w) => (
            <ToggleButton key={w} value={w} disabled={w === "mine" && !me}>
              {WHO_LABELS[w]}
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
      </Stack>
      {error ? (
        <Alert severity="error" sx={{ mb: 2 }} onClose={() => setError(null)}>
          {error}
        </Alert>
      ) : null}
      {TRIAGE_GROUPS.map((g) => (
        <TriageSection
          key={g.group}
          group={g.group}
          title={g.label}
          assignee={g.group === "investigating" ? undefined : assignee}
          tick={tick}
          actions={actions}
          mayReview={(project) => can(access, REVIEW_PERMISSION, project)}
        />
      ))}
      <Snackbar
        open={undo !== null}
        autoHideDuration={8000}
        onClose={(_, reason) => reason !== "clickaway" && setUndo(null)}
        message={undo ? `Acknowledged ${label(undo)}` : ""}
        action={
          <Button
            color="inherit"
            size="small"
            onClick={() => {
              const s = undo;
              setUndo(null);
              if (s) void run(s, { action: "reopen" });
            }}
          >
            Undo
          </Button>
        }
      />
      {editing ? (
        <FeedbackDialog
          open
          mode={editing.mode}
          initial={feedbackOf(editing.session)}
          onClose={() => setEditing(null)}
          onSave={async (f) => {
            await request({
              session_ids: [editing.session.id],
              action: editing.mode === "complete" ? "complete" : "update_feedback",
              ...feedbackFields(f),
            });
            refresh();
          }}
        />
      ) : null}
    </section>
  );
}
