import ExpandMoreIcon from "@mui/icons-material/ExpandMore";
import {
  Accordion,
  AccordionDetails,
  AccordionSummary,
  Alert,
  Box,
  Button,
  CircularProgress,
  Stack,
  Tooltip,
  Typography,
} from "@mui/material";
import { FAILURE_TAGS, type SessionDetail } from "@tarsy/contracts";
import { useState } from "react";
import { ApiError } from "../lib/api.ts";
import { BAND_LABELS, scoreBand, scoreBlocker } from "../lib/review.ts";
import { useLoad, useServices } from "./context.tsx";
import { formatTime } from "./format.ts";
import { Markdown } from "./Markdown.tsx";
import { ScoreChip } from "./Review.tsx";
import { SectionCard } from "./SectionCard.tsx";
import { ToneChip } from "./StatusChip.tsx";

const TAG_HELP = new Map<string, string>(FAILURE_TAGS.map((t) => [t.term, t.description]));

function ReportAccordion(props: { id: string; title: string; text: string }) {
  return (
    <Accordion disableGutters variant="outlined" slotProps={{ heading: { component: "h3" } }}>
      <AccordionSummary
        expandIcon={<ExpandMoreIcon />}
        id={props.id}
        aria-controls={`${props.id}-content`}
      >
        {props.title}
      </AccordionSummary>
      <AccordionDetails id={`${props.id}-content`}>
        <Markdown text={props.text} />
      </AccordionDetails>
    </Accordion>
  );
}

/**
 * The judge's latest score of the session (the "Evaluation & Learning" stage): score and band,
 * failure tags, the analysis and the tool-improvement report; "Score now" / "Re-score" for a
 * caller who may, disabled with the reason while the session runs or is being scored.
 */
export function ScoreCard(props: { detail: SessionDetail; mayScore: boolean }) {
  const { api } = useServices();
  const d = props.detail;
  const score = useLoad(
    () =>
      api.sessionScore(d.id).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }),
    [d.id, d.scoring_status, d.latest_score],
  );
  // Asked, and the session's scoring status has not moved yet.
  const [requestedAt, setRequestedAt] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const s = score.data;
  // The session's own state is the freshest (it follows the live events).
  const status = d.scoring_status ?? s?.status ?? null;
  const requested = requestedAt !== undefined && requestedAt === d.scoring_status;
  const blocker = scoreBlocker(d) ?? (requested ? "Scoring was requested" : null);
  const rescore = s !== null && s !== undefined;
  const post = async () => {
    setError(null);
    try {
      await api.scoreSession(d.id);
      setRequestedAt(d.scoring_status);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <SectionCard
      headingId="score-h"
      title="Score"
      data-testid="score-card"
      data-scoring={status ?? "none"}
      action={
        props.mayScore ? (
          <Stack direction="row" spacing={1} sx={{ alignItems: "center" }}>
            {blocker ? (
              <Typography variant="body2" color="text.secondary" id="score-blocker">
                {blocker}
              </Typography>
            ) : null}
            <Button
              variant="outlined"
              disabled={blocker !== null}
              onClick={post}
              aria-describedby={blocker ? "score-blocker" : undefined}
            >
              {rescore ? "Re-score" : "Score now"}
            </Button>
          </Stack>
        ) : null
      }
    >
      {error ? (
        <Alert severity="error" sx={{ mb: 2 }} onClose={() => setError(null)}>
          {error}
        </Alert>
      ) : null}
      {score.error ? (
        <Alert severity="error">Could not load the score: {score.error.message}</Alert>
      ) : null}
      {status === "in_progress" ? (
        <Box sx={{ display: "flex", gap: 1, alignItems: "center" }} aria-busy="true">
          <CircularProgress size={18} aria-hidden /> Evaluation & Learning is scoring the session…
        </Box>
      ) : null}
      {s === null && status !== "in_progress" ? (
        <Typography color="text.secondary">Not scored yet.</Typography>
      ) : null}
      {s && s.status === "failed" && status !== "in_progress" ? (
        <Alert severity="error">Scoring failed: {s.error_message ?? "no reason given"}</Alert>
      ) : null}
      {s && s.status === "completed" && s.total_score !== null ? (
        <>
          <Stack direction="row" spacing={2} sx={{ alignItems: "baseline", mb: 1 }}>
            <Typography variant="h4" component="p" data-testid="score-total">
              {s.total_score}
              <Typography component="span" color="text.secondary">
                /100
              </Typography>
            </Typography>
            <ScoreChip score={s.total_score} status="completed" />
            <Typography data-testid="score-band">
              {BAND_LABELS[scoreBand(s.total_score)]}
            </Typography>
          </Stack>
          {s.failure_tags?.length ? (
            <Stack
              component="ul"
              direction="row"
              spacing={0.5}
              useFlexGap
              sx={{ flexWrap: "wrap", mb: 2, p: 0, listStyle: "none" }}
              aria-label="Failure tags"
            >
              {s.failure_tags.map((t) => (
                <Tooltip key={t} title={TAG_HELP.get(t) ?? ""}>
                  <li data-tag={t}>
                    <ToneChip tone="error" label={t.replaceAll("_", " ")} />
                  </li>
                </Tooltip>
              ))}
            </Stack>
          ) : null}
          {s.score_analysis ? (
            <ReportAccordion id="score-analysis" title="Score analysis" text={s.score_analysis} />
          ) : null}
          {s.tool_improvement_report ? (
            <ReportAccordion
              id="score-tools"
              title="Tool improvement report"
              text={s.tool_improvement_report}
            />
          ) : null}
          <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
            Scored {s.completed_at ? formatTime(s.completed_at) : ""} · triggered by{" "}
            {s.score_triggered_by} · prompt {s.prompt_hash.slice(0, 8)}
          </Typography>
        </>
      ) : null}
    </SectionCard>
  );
}
