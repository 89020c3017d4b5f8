import { Alert, Button, Paper, Stack, Typography } from "@mui/material";
import type { ReviewAction, SessionSummary, UpdateReviewResponse } from "@tarsy/contracts";
import { useState } from "react";
import { reviewFailures } from "../lib/review.ts";
import { FeedbackDialog, feedbackFields, useReviewRequest } from "./Review.tsx";

const VERB: Partial<Record<ReviewAction, string>> = {
  claim: "Claimed",
  acknowledge: "Acknowledged",
  complete: "Completed",
};

/**
 * Review actions on the selected rows: claim, acknowledge, complete with a rating. Each session
 * changes alone; those that could not are listed with the server's reason.
 */
export function BulkReviewBar(props: {
  selected: ReadonlySet<string>;
  sessions: readonly SessionSummary[];
  clear: () => void;
  onDone: () => void;
}) {
  const request = useReviewRequest();
  const [busy, setBusy] = useState(false);
  const [completing, setCompleting] = useState(false);
  const [outcome, setOutcome] = useState<{
    action: ReviewAction;
    response: UpdateReviewResponse;
  } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const ids = [...props.selected];
  const name = (id: string) => {
    const s = props.sessions.find((x) => x.id === id);
    return s ? `${s.alert_type} · ${id.slice(0, 8)}` : id.slice(0, 8);
  };
  const run = async (action: ReviewAction, extra: object = {}) => {
    setBusy(true);
    setError(null);
    try {
      const response = await request({ session_ids: ids, action, ...extra });
      setOutcome({ action, response });
      if (reviewFailures(response).length === 0) props.clear();
      props.onDone();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const failures = outcome ? reviewFailures(outcome.response) : [];
  const succeeded = outcome ? outcome.response.results.filter((r) => r.success).length : 0;
  return (
    <>
      {ids.length > 0 ? (
        <Paper
          variant="outlined"
          component="section"
          aria-label="Bulk review"
          sx={{ p: 1, mb: 1, display: "flex", alignItems: "center", gap: 1, flexWrap: "wrap" }}
        >
          <Typography sx={{ mx: 1 }} role="status">
            {ids.length} selected
          </Typography>
          <Button disabled={busy} onClick={() => run("claim")}>
            Claim
          </Button>
          <Button disabled={busy} onClick={() => run("acknowledge")}>
            Acknowledge
          </Button>
          <Button disabled={busy} onClick={() => setCompleting(true)}>
            Complete…
          </Button>
          <Button disabled={busy} onClick={props.clear} color="inherit">
            Clear selection
          </Button>
        </Paper>
      ) : null}
      {error ? (
        <Alert severity="error" sx={{ mb: 1 }} onClose={() => setError(null)}>
          {error}
        </Alert>
      ) : null}
      {outcome ? (
        <Alert
          severity={failures.length ? "warning" : "success"}
          sx={{ mb: 1 }}
          onClose={() => setOutcome(null)}
          data-testid="bulk-outcome"
        >
          {VERB[outcome.action] ?? "Updated"} {succeeded} of {outcome.response.results.length}.
          {failures.length ? (
            <Stack component="ul" sx={{ m: 0, pl: 2 }}>
              {failures.map((f) => (
                <li key={f.session_id} data-session-id={f.session_id}>
                  {name(f.session_id)}: {f.error}
                </li>
              ))}
            </Stack>
          ) : null}
        </Alert>
      ) : null}
      <FeedbackDialog
        open={completing}
        mode="complete"
        initial={{ quality_rating: null, action_taken: "", investigation_feedback: "" }}
        onClose={() => setCompleting(false)}
        onSave={(f) => run("complete", feedbackFields(f))}
      />
    </>
  );
}
