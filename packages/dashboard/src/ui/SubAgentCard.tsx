import ExpandMoreIcon from "@mui/icons-material/ExpandMore";
import HubIcon from "@mui/icons-material/Hub";
import Accordion from "@mui/material/Accordion";
import AccordionDetails from "@mui/material/AccordionDetails";
import AccordionSummary from "@mui/material/AccordionSummary";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import Stack from "@mui/material/Stack";
import type { Theme } from "@mui/material/styles";
import Typography from "@mui/material/Typography";
import { ACTIVE_EXECUTION_STATUSES, type SessionDetail } from "@tarsy/contracts";
import { useContext } from "react";
import type { TimelineItem } from "../lib/timeline.ts";
import { formatDuration } from "./format.ts";
import { StatusChip } from "./StatusChip.tsx";
import { Entry, ExpandedContext } from "./TimelineEntry.tsx";

type Execution = SessionDetail["stages"][number]["executions"][number];

/** Red text readable on the card in either scheme (the error palette's dark / light shade). */
const errorText = (theme: Theme) => {
  const palette = (theme.vars ?? theme).palette.error;
  return { color: palette.dark, ...theme.applyStyles("dark", { color: palette.light }) };
};

/** How long a sub-agent ran, once it ended. */
function durationOf(e: Execution): string | null {
  if (!e.started_at || !e.completed_at) return null;
  return formatDuration(new Date(e.completed_at).getTime() - new Date(e.started_at).getTime());
}

/**
 * A sub-agent inline in its parent's flow: a collapsible card. Collapsed it shows the agent, its
 * task (cut to one line), its status, how long it ran and its tokens, and a failure's reason;
 * opened, the sub-agent's own timeline items, rendered (and streamed) as any agent's. Its
 * open state lives above the virtualised list, as the timeline's other collapsible parts.
 */
export function SubAgentCard(props: {
  execution: Execution;
  items: readonly TimelineItem[];
  highlighted: string | null;
}) {
  const { execution: e, items } = props;
  const expanded = useContext(ExpandedContext);
  const key = `subagent:${e.id}`;
  const open = expanded.isOpen(key);
  const running = ACTIVE_EXECUTION_STATUSES.includes(e.status);
  const failed = e.status === "failed" || e.status === "timed_out";
  const duration = durationOf(e);
  const tokens = e.token_usage?.total_tokens ?? 0;
  const task =
    e.task ?? items.find((i) => i.event_type === "task_assigned")?.content ?? "(no task yet)";
  const detailsId = `subagent-${e.id}-content`;
  return (
    <Box
      component="section"
      aria-label={`Sub-agent ${e.agent_name}`}
      data-testid="sub-agent"
      data-execution-id={e.id}
      data-status={e.status}
      sx={{ ml: { xs: 2, sm: 5 }, mr: 1, my: 1 }}
    >
      <Accordion
        expanded={open}
        onChange={(_, next) => expanded.toggle(key, next)}
        disableGutters
        variant="outlined"
        slotProps={{ transition: { timeout: 0 }, heading: { component: "h4" } }}
        sx={{
          "&::before": { display: "none" },
          borderStyle: running ? "dashed" : "solid",
          borderColor: failed ? "error.main" : "divider",
          borderLeftWidth: 3,
          borderLeftColor: failed ? "error.main" : "secondary.main",
        }}
      >
        <AccordionSummary
          expandIcon={<ExpandMoreIcon />}
          aria-controls={detailsId}
          sx={{ "& .MuiAccordionSummary-content": { minWidth: 0 } }}
        >
          <Stack spacing={0.25} sx={{ minWidth: 0, width: "100%" }}>
            <Stack direction="row" spacing={1} sx={{ alignItems: "center", minWidth: 0 }}>
              <HubIcon fontSize="small" color="secondary" aria-hidden />
              <Typography component="span" variant="body2" color="text.secondary">
                Sub-agent
              </Typography>
              <Typography component="span" variant="body2" sx={{ fontWeight: 600 }}>
                {e.agent_name}
              </Typography>
              <Typography
                component="span"
                variant="body2"
                color="text.secondary"
                data-testid="sub-agent-task"
                title={task}
                noWrap
                sx={{ flex: 1, minWidth: 0 }}
              >
                {task}
              </Typography>
              <StatusChip status={e.status} title={e.error_message ?? undefined} />
              {duration ? (
                <Typography component="span" variant="caption" color="text.secondary">
                  {duration}
                </Typography>
              ) : null}
              {tokens > 0 ? (
                <Typography component="span" variant="caption" color="text.secondary" noWrap>
                  {tokens.toLocaleString()} tokens
                </Typography>
              ) : null}
            </Stack>
            {failed && e.error_message ? (
              <Typography
                component="span"
                variant="body2"
                data-testid="sub-agent-error"
                noWrap
                title={e.error_message}
                sx={errorText}
              >
                {e.error_message}
              </Typography>
            ) : null}
          </Stack>
        </AccordionSummary>
        <AccordionDetails id={detailsId} sx={{ pt: 0 }}>
          {open ? (
            <>
              {failed && e.error_message ? (
                <Alert severity="error" variant="outlined" sx={{ mb: 1 }}>
                  {e.status === "timed_out" ? "Timed out" : "Failed"}: {e.error_message}
                </Alert>
              ) : e.status === "cancelled" && e.error_message ? (
                <Alert severity="info" variant="outlined" sx={{ mb: 1 }}>
                  Cancelled: {e.error_message}
                </Alert>
              ) : null}
              <Box
                component="ol"
                aria-label={`${e.agent_name} timeline`}
                sx={{ listStyle: "none", m: 0, p: 0 }}
              >
                {items.map((item) => (
                  <li key={item.event_id}>
                    <Entry item={item} highlighted={item.event_id === props.highlighted} />
                  </li>
                ))}
              </Box>
              {running ? (
                <Stack direction="row" spacing={1} sx={{ alignItems: "center", px: 1.5, py: 1 }}>
                  <CircularProgress size={12} aria-hidden />
                  <Typography variant="body2" color="text.secondary">
                    Working…
                  </Typography>
                </Stack>
              ) : items.length === 0 ? (
                <Typography variant="body2" color="text.secondary" sx={{ px: 1.5, py: 1 }}>
                  No timeline events.
                </Typography>
              ) : null}
            </>
          ) : null}
        </AccordionDetails>
      </Accordion>
    </Box>
  );
}
