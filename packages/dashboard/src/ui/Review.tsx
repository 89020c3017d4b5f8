import CheckIcon from "@mui/icons-material/Check";
import ThumbDownOutlined from "@mui/icons-material/ThumbDownOutlined";
import ThumbsUpDownOutlined from "@mui/icons-material/ThumbsUpDownOutlined";
import ThumbUpOutlined from "@mui/icons-material/ThumbUpOutlined";
import {
  Box,
  Button,
  Chip,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  Stack,
  TextField,
  ToggleButton,
  ToggleButtonGroup,
  Tooltip,
  Typography,
} from "@mui/material";
import type {
  QualityRating,
  ReviewState,
  ScoringStatus,
  UpdateReviewRequest,
  UpdateReviewResponse,
} from "@tarsy/contracts";
import { useState } from "react";
import {
  BAND_LABELS,
  isAcknowledged,
  RATING_LABELS,
  REVIEW_STATUS_LABELS,
  scoreBand,
} from "../lib/review.ts";
import { useServices } from "./context.tsx";
import { type Tone, ToneChip } from "./StatusChip.tsx";

const BAND_TONES: Record<ReturnType<typeof scoreBand>, Tone> = {
  good: "success",
  partial: "warning",
  poor: "error",
};
const RATING_TONES: Record<QualityRating, Tone> = {
  accurate: "success",
  partially_accurate: "warning",
  inaccurate: "error",
};
const STATUS_TONES: Record<NonNullable<ReviewState["review_status"]>, Tone> = {
  needs_review: "warning",
  in_progress: "info",
  reviewed: "success",
};

/** A session's latest score, coloured by band; a spinner while the judge runs. */
export function ScoreChip(props: { score: number | null; status: ScoringStatus | null }) {
  if (props.status === "in_progress") {
    return (
      <Box
        component="span"
        className="score"
        data-scoring="in_progress"
        sx={{ display: "inline-flex", alignItems: "center", gap: 0.5 }}
      >
        <CircularProgress size={14} aria-label="Scoring" />
      </Box>
    );
  }
  if (props.score === null) {
    return (
      <Typography
        component="span"
        className="score"
        color="text.secondary"
        title={props.status === "failed" ? "Scoring failed" : "Not scored"}
      >
        {props.status === "failed" ? "failed" : "—"}
      </Typography>
    );
  }
  const band = scoreBand(props.score);
  return (
    <Box component="span" className="score" data-band={band}>
      <ToneChip
        tone={BAND_TONES[band]}
        label={String(props.score)}
        title={`Score ${props.score}/100: ${BAND_LABELS[band].toLowerCase()}`}
      />
    </Box>
  );
}

/** The review state in a chip: needs review, in review (by whom), reviewed or acknowledged. */
export function ReviewStatusChip(props: { review: ReviewState }) {
  const r = props.review;
  if (!r.review_status) return null;
  if (isAcknowledged(r)) {
    return (
      <Chip
        size="small"
        variant="outlined"
        icon={<CheckIcon />}
        label="Acknowledged"
        data-review="acknowledged"
      />
    );
  }
  return (
    <span data-review={r.review_status}>
      <ToneChip
        tone={STATUS_TONES[r.review_status]}
        label={REVIEW_STATUS_LABELS[r.review_status]}
      />
    </span>
  );
}

export function RatingChip(props: { rating: QualityRating }) {
  return (
    <span data-rating={props.rating}>
      <ToneChip tone={RATING_TONES[props.rating]} label={RATING_LABELS[props.rating]} />
    </span>
  );
}

/** The list's review cell: status, assignee and rating. */
export function ReviewCell(props: { review: ReviewState }) {
  const r = props.review;
  if (!r.review_status) {
    return (
      <Typography component="span" color="text.secondary">
        —
      </Typography>
    );
  }
  return (
    <Stack
      direction="row"
      spacing={0.5}
      useFlexGap
      className="review"
      sx={{ flexWrap: "wrap", alignItems: "center" }}
    >
      <ReviewStatusChip review={r} />
      {r.quality_rating ? <RatingChip rating={r.quality_rating} /> : null}
      {r.assignee ? (
        <Typography component="span" variant="body2" className="assignee">
          {r.assignee}
        </Typography>
      ) : null}
    </Stack>
  );
}

const RATING_ICONS = {
  accurate: ThumbUpOutlined,
  partially_accurate: ThumbsUpDownOutlined,
  inaccurate: ThumbDownOutlined,
} as const;
export const RATINGS = Object.keys(RATING_ICONS) as QualityRating[];

/** One icon button per rating: a click completes the review with it. */
export function RatingButtons(props: {
  onRate: (rating: QualityRating) => void;
  disabled?: boolean;
  /** Who the buttons are about, for their labels (e.g. the alert type). */
  about?: string;
}) {
  return (
    <Stack direction="row" spacing={0} role="group" aria-label="Rate and complete">
      {RATINGS.map((rating) => {
        const Icon = RATING_ICONS[rating];
        const label = `Rate ${RATING_LABELS[rating].toLowerCase()}${props.about ? ` (${props.about})` : ""}`;
        return (
          <Tooltip key={rating} title={`${RATING_LABELS[rating]}: complete the review`}>
            <span>
              <IconButton
                size="small"
                aria-label={label}
                disabled={props.disabled}
                onClick={() => props.onRate(rating)}
              >
                <Icon fontSize="small" />
              </IconButton>
            </span>
          </Tooltip>
        );
      })}
    </Stack>
  );
}

export interface Feedback {
  quality_rating: QualityRating | null;
  action_taken: string;
  investigation_feedback: string;
}

/**
 * The rating, what was done and what the investigation got right or wrong. `complete` asks for a
 * rating; `edit` changes a reviewed session's feedback.
 */
export function FeedbackDialog(props: {
  open: boolean;
  mode: "complete" | "edit";
  initial: Feedback;
  onClose: () => void;
  onSave: (feedback: Feedback) => Promise<void>;
}) {
  const [value, setValue] = useState(props.initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const title = props.mode === "complete" ? "Complete review" : "Edit feedback";
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onSave(value);
      props.onClose();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={props.open}
      onClose={props.onClose}
      fullWidth
      maxWidth="sm"
      slotProps={{ transition: { onEnter: () => setValue(props.initial) } }}
    >
      <DialogTitle>{title}</DialogTitle>
      <DialogContent>
        <Typography id="feedback-rating" variant="subtitle2" sx={{ mt: 1, mb: 0.5 }}>
          Quality rating
        </Typography>
        <ToggleButtonGroup
          exclusive
          size="small"
          aria-labelledby="feedback-rating"
          value={value.quality_rating}
          onChange={(_, rating: QualityRating | null) =>
            setValue((v) => ({ ...v, quality_rating: rating }))
          }
          sx={{ "& .MuiToggleButton-root": { textTransform: "none" } }}
        >
          {RATINGS.map((r) => (
            <ToggleButton key={r} value={r}>
              {RATING_LABELS[r]}
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
        <TextField
          label="Action taken"
          multiline
          minRows={2}
          fullWidth
          margin="normal"
          value={value.action_taken}
          onChange={(e) => setValue((v) => ({ ...v, action_taken: e.target.value }))}
        />
        <TextField
          label="Investigation feedback"
          multiline
          minRows={3}
          fullWidth
          margin="normal"
          value={value.investigation_feedback}
          onChange={(e) => setValue((v) => ({ ...v, investigation_feedback: e.target.value }))}
        />
        {error ? (
          <Typography color="error" role="alert">
            {error}
          </Typography>
        ) : null}
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>Cancel</Button>
        <Button
          variant="contained"
          onClick={save}
          disabled={busy || (props.mode === "complete" && !value.quality_rating)}
        >
          {props.mode === "complete" ? "Complete" : "Save"}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

export function feedbackOf(review: ReviewState): Feedback {
  return {
    quality_rating: review.quality_rating,
    action_taken: review.action_taken ?? "",
    investigation_feedback: review.investigation_feedback ?? "",
  };
}

/** The request fields of a feedback form (empty texts are not sent). */
export function feedbackFields(f: Feedback): Partial<UpdateReviewRequest> {
  return {
    ...(f.quality_rating ? { quality_rating: f.quality_rating } : {}),
    ...(f.action_taken ? { action_taken: f.action_taken } : {}),
    ...(f.investigation_feedback ? { investigation_feedback: f.investigation_feedback } : {}),
  };
}

/**
 * Sends one review request; a session the action could not change is an error with the
 * server's reason (one session), or the result to show (several).
 */
export function useReviewRequest(): (body: UpdateReviewRequest) => Promise<UpdateReviewResponse> {
  const { api } = useServices();
  return async (body) => {
    const response = await api.updateReview(body);
    const failed = response.results.find((r) => !r.success);
    if (body.session_ids.length === 1 && failed) {
      throw new Error(`Could not ${body.action.replace("_", " ")}: ${failed.error ?? "failed"}`);
    }
    return response;
  };
}
