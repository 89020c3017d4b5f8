import {
  Box,
  Card,
  CardContent,
  Grid,
  LinearProgress,
  Link as MuiLink,
  Paper,
  Typography,
} from "@mui/material";
import type { AlertTypesResponse, SessionSummary } from "@tarsy/contracts";
import { Link as RouterLink } from "react-router";
import { elapsedSince } from "./format.ts";
import { useNow } from "./hooks.ts";
import { StatusChip } from "./StatusChip.tsx";

type Chains = AlertTypesResponse["chains"];

/** How far through its chain a session is, from its current stage's name (null: unknown). */
function progressOf(
  session: SessionSummary,
  chains: Chains | null,
): { at: number; of: number } | null {
  const stages = chains?.find((c) => c.id === session.chain_id)?.stages;
  const at = session.current_stage_name ? (stages?.indexOf(session.current_stage_name) ?? -1) : -1;
  return stages && at >= 0 ? { at: at + 1, of: stages.length } : null;
}

function SessionCard(props: {
  session: SessionSummary;
  chains: Chains | null;
  now: number;
  queued: boolean;
}) {
  const { session: s, now } = props;
  const progress = props.queued ? null : progressOf(s, props.chains);
  return (
    <Card variant="outlined" component="article" data-session-id={s.id}>
      <CardContent sx={{ "&:last-child": { pb: 2 } }}>
        <Box sx={{ display: "flex", alignItems: "center", gap: 1, mb: 0.5 }}>
          <MuiLink component={RouterLink} to={`/sessions/${s.id}`} sx={{ fontWeight: 600 }}>
            {s.alert_type}
          </MuiLink>
          <StatusChip status={s.status} />
        </Box>
        <Typography variant="body2" color="text.secondary">
          Chain {s.chain_id}
        </Typography>
        {props.queued ? (
          <Typography variant="body2">waiting {elapsedSince(s.created_at, now)}</Typography>
        ) : (
          <>
            <Typography variant="body2">
              {progress ? `Stage ${progress.at} of ${progress.of}` : "Stage"}:{" "}
              {s.current_stage_name ?? "starting"} ·{" "}
              {elapsedSince(s.started_at ?? s.created_at, now)}
            </Typography>
            <LinearProgress
              sx={{ mt: 1 }}
              aria-label={`${s.alert_type} progress`}
              {...(progress
                ? { variant: "determinate", value: (100 * (progress.at - 0.5)) / progress.of }
                : {})}
            />
          </>
        )}
      </CardContent>
    </Card>
  );
}

function Panel(props: {
  title: string;
  id: string;
  empty: string;
  sessions: SessionSummary[];
  chains: Chains | null;
  queued: boolean;
}) {
  const now = useNow();
  return (
    <Paper component="section" aria-labelledby={props.id} variant="outlined" sx={{ p: 2, flex: 1 }}>
      <Typography variant="h2" id={props.id} gutterBottom>
        {props.title} ({props.sessions.length})
      </Typography>
      {props.sessions.length === 0 ? (
        <Typography color="text.secondary">{props.empty}</Typography>
      ) : null}
      <Grid container spacing={1}>
        {props.sessions.map((s) => (
          <Grid key={s.id} size={{ xs: 12, md: 6, xl: 4 }}>
            <SessionCard session={s} chains={props.chains} now={now} queued={props.queued} />
          </Grid>
        ))}
      </Grid>
    </Paper>
  );
}

/** Running and waiting sessions as cards, updated from the live feed by the page. */
export function ActiveSessions(props: {
  active: SessionSummary[];
  queued: SessionSummary[];
  chains: Chains | null;
}) {
  return (
    <Box sx={{ display: "flex", gap: 2, flexDirection: { xs: "column", md: "row" }, mb: 2 }}>
      <Panel
        title="Active"
        id="active-h"
        empty="Nothing running."
        sessions={props.active}
        chains={props.chains}
        queued={false}
      />
      <Panel
        title="Queued"
        id="queued-h"
        empty="Queue empty."
        sessions={props.queued}
        chains={props.chains}
        queued
      />
    </Box>
  );
}
