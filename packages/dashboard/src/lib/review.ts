import type {
  AuthzActionName,
  QualityRating,
  ReviewState,
  ReviewStatus,
  SessionStatus,
  TriageGroup,
  UpdateReviewResponse,
} from "@tarsy/contracts";
import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";

/**
 * The review and score vocabulary of the dashboard (issue #21, as the Go TARSy shows it):
 * score bands, labels, and what a session's review state offers.
 */

/** What a caller needs in a project to review or score its sessions. */
export const REVIEW_PERMISSION: AuthzActionName = "update";

export type ScoreBand = "good" | "partial" | "poor";

/** ≥ 60 good, 35–59 partial, < 35 poor (the Go TARSy's bands). */
export function scoreBand(score: number): ScoreBand {
  if (score >= 60) return "good";
  if (score >= 35) return "partial";
  return "poor";
}

export const BAND_LABELS: Record<ScoreBand, string> = {
  good: "Good",
  partial: "Partial",
  poor: "Poor",
};

export const REVIEW_STATUS_LABELS: Record<ReviewStatus, string> = {
  needs_review: "Needs review",
  in_progress: "In review",
  reviewed: "Reviewed",
};

export const RATING_LABELS: Record<QualityRating, string> = {
  accurate: "Accurate",
  partially_accurate: "Partially accurate",
  inaccurate: "Inaccurate",
};

export const TRIAGE_GROUPS: readonly { group: TriageGroup; label: string }[] = [
  { group: "investigating", label: "Investigating" },
  { group: "needs_review", label: "Needs review" },
  { group: "in_progress", label: "In progress" },
  { group: "reviewed", label: "Reviewed" },
];

/** Reviewed without a rating: acknowledged (one click, nothing to say about it). */
export function isAcknowledged(review: Pick<ReviewState, "review_status" | "quality_rating">) {
  return review.review_status === "reviewed" && review.quality_rating === null;
}

/** Whether a session can be scored now, and if not, why. */
export function scoreBlocker(session: {
  status: SessionStatus;
  scoring_status: "in_progress" | "completed" | "failed" | null;
}): string | null {
  if (!TERMINAL_SESSION_STATUSES.includes(session.status)) {
    return "The session has not ended yet";
  }
  if (session.scoring_status === "in_progress") return "Scoring is in progress";
  return null;
}

/** The sessions a review request could not change, with why, in a sentence each. */
export function reviewFailures(
  response: UpdateReviewResponse,
): { session_id: string; error: string }[] {
  return response.results
    .filter((r) => !r.success)
    .map((r) => ({ session_id: r.session_id, error: r.error ?? "failed" }));
}
