import { Alert, Button, List, ListItem, ListItemText, Stack, Typography } from "@mui/material";
import type { ReviewActivity, SessionDetail, UpdateReviewRequest } from "@tarsy/contracts";
import { useState } from "react";
import { RATING_LABELS, REVIEW_STATUS_LABELS } from "../lib/review.ts";
import { useLoad, useServices } from "./context.tsx";
import { formatTime } from "./format.ts";
import {
  FeedbackDialog,
  feedbackFields,
  feedbackOf,
  RatingChip,
  ReviewStatusChip,
  useReviewRequest,
} from "./Review.tsx";
import { SectionCard } from "./SectionCard.tsx";

const ACTION_WORDS: Record<ReviewActivity["action"], string> = {
  claim: "claimed",
  unclaim: "unclaimed",
  complete: "completed",
  reopen: "reopened",
  update_feedback: "edited the feedback",
  acknowledge: "acknowledged",
};

function activityText(a: ReviewActivity): string {
  const to = REVIEW_STATUS_LABELS[a.to_status].toLowerCase();
  const rated = a.action === "complete" || a.action === "update_feedback";
  const rating =
    rated && a.quality_rating ? ` as ${RATING_LABELS[a.quality_rating].toLowerCase()}` : "";
  return `${a.actor} ${ACTION_WORDS[a.action]}${rating} → ${to}`;
}

/** The session's review: state, rating and feedback, the actions it allows, and its log. */
export function ReviewPanel(props: { detail: SessionDetail; mayReview: boolean }) {
  const { api } = useServices();
  const request = useReviewRequest();
  const d = props.detail;
  const activity = useLoad(
    () => api.reviewActivity(d.id),
    [d.id, d.review_status, d.assignee, d.reviewed_at, d.quality_rating, d.action_taken],
  );
  const [dialog, setDialog] = useState<"complete" | "edit" | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!d.review_status) return null;
  const act = async (body: Omit<UpdateReviewRequest, "session_ids">) => {
    setBusy(true);
    setError(null);
    try {
      await request({ session_ids: [d.id], ...body });
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const status = d.review_status;
  return (
    <SectionCard
      headingId="review-h"
      title="Review"
      data-testid="review-panel"
      data-review-status={status}
      chips={
        <>
          <ReviewStatusChip review={d} />
          {d.quality_rating ? <RatingChip rating={d.quality_rating} /> : null}
        </>
      }
      action={
        props.mayReview ? (
          <Stack direction="row" spacing={1}>
            {status === "needs_review" ? (
              <>
                <Button disabled={busy} onClick={() => act({ action: "claim" })}>
                  Claim
                </Button>
                <Button disabled={busy} onClick={() => act({ action: "acknowledge" })}>
                  Acknowledge
                </Button>
              </>
            ) : null}
            {status === "in_progress" ? (
              <Button disabled={busy} onClick={() => act({ action: "unclaim" })}>
                Unclaim
              </Button>
            ) : null}
            {status !== "reviewed" ? (
              <Button variant="outlined" disabled={busy} onClick={() => setDialog("complete")}>
                Complete…
              </Button>
            ) : (
              <>
                <Button disabled={busy} onClick={() => act({ action: "reopen" })}>
                  Reopen
                </Button>
                <Button disabled={busy} onClick={() => setDialog("edit")}>
                  Edit feedback
                </Button>
              </>
            )}
          </Stack>
        ) : null
      }
      after={
        <FeedbackDialog
          open={dialog !== null}
          mode={dialog ?? "edit"}
          initial={feedbackOf(d)}
          onClose={() => setDialog(null)}
          onSave={(f) =>
            request({
              session_ids: [d.id],
              action: dialog === "complete" ? "complete" : "update_feedback",
              ...feedbackFields(f),
            }).then(() => undefined)
          }
        />
      }
    >
      {error ? (
        <Alert severity="error" sx={{ mb: 2 }} onClose={() => setError(null)}>
          {error}
        </Alert>
      ) : null}
      <Stack component="dl" direction="row" spacing={3} useFlexGap sx={{ flexWrap: "wrap", m: 0 }}>
        <div>
          <Typography component="dt" variant="body2" color="text.secondary">
            Assignee
          </Typography>
          <Typography component="dd" sx={{ m: 0 }} data-testid="review-assignee">
            {d.assignee ?? "unassigned"}
          </Typography>
        </div>
        {d.reviewed_at ? (
          <div>
            <Typography component="dt" variant="body2" color="text.secondary">
              Reviewed
            </Typography>
            <Typography component="dd" sx={{ m: 0 }}>
              {formatTime(d.reviewed_at)}
            </Typography>
          </div>
        ) : null}
      </Stack>
      {d.action_taken ? (
        <>
          <Typography variant="subtitle2" component="h3" sx={{ mt: 2 }}>
            Action taken
          </Typography>
          <Typography sx={{ whiteSpace: "pre-wrap" }}>{d.action_taken}</Typography>
        </>
      ) : null}
      {d.investigation_feedback ? (
        <>
          <Typography variant="subtitle2" component="h3" sx={{ mt: 2 }}>
            Investigation feedback
          </Typography>
          <Typography sx={{ whiteSpace: "pre-wrap" }}>{d.investigation_feedback}</Typography>
        </>
      ) : null}
      {activity.data?.activities.length ? (
        <>
          <Typography variant="subtitle2" component="h3" sx={{ mt: 2 }}>
            Activity
          </Typography>
          <List
            dense
            aria-label="Review activity"
            sx={{ borderLeft: 2, borderColor: "divider", ml: 1 }}
          >
            {activity.data.activities.map((a) => (
              <ListItem key={a.id} data-action={a.action}>
                <ListItemText primary={activityText(a)} secondary={formatTime(a.created_at)} />
              </ListItem>
            ))}
          </List>
        </>
      ) : null}
    </SectionCard>
  );
}
