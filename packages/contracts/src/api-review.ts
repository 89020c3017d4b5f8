import { z } from "zod";
import { IdSchema, TimestampSchema } from "./common.ts";

/**
 * The HTTP API of the quality loop (issue #21), in the Go TARSy's shapes: an LLM judge's
 * score of a finished session, and the team's review of it (claim, rate, feedback, triage).
 */

// --- scoring ---

/** Where a session's latest score stands. */
export const ScoringStatusSchema = z.enum(["in_progress", "completed", "failed"]);
export type ScoringStatus = z.infer<typeof ScoringStatusSchema>;

/**
 * The judge's vocabulary of failures: named in its prompt, and found in its analysis by a
 * plain scan (the Go TARSy's ADR-0011). One list for both, so they never disagree.
 */
export const FAILURE_TAGS = [
  {
    term: "premature_conclusion",
    description: "reached a diagnosis without gathering sufficient evidence",
  },
  { term: "missed_available_tool", description: "a relevant tool was available but not used" },
  {
    term: "unsupported_confidence",
    description: "stated high confidence without comprehensive evidence",
  },
  {
    term: "incomplete_evidence",
    description: "stopped gathering evidence before covering all relevant dimensions",
  },
  {
    term: "hallucinated_evidence",
    description: "cited or assumed evidence not present in the investigation data",
  },
  {
    term: "wrong_conclusion",
    description: "the final diagnosis is incorrect or contradicted by gathered evidence",
  },
] as const;
export const FailureTagSchema = z.enum(
  FAILURE_TAGS.map((t) => t.term) as [
    (typeof FAILURE_TAGS)[number]["term"],
    ...(typeof FAILURE_TAGS)[number]["term"][],
  ],
);
export type FailureTag = z.infer<typeof FailureTagSchema>;

/** `GET /api/v1/sessions/:id/score`: the session's latest score (404 `score_not_found`). */
export const SessionScoreSchema = z.object({
  id: IdSchema,
  session_id: IdSchema,
  /** The "Evaluation & Learning" stage that ran the judge. */
  stage_id: IdSchema.nullable(),
  status: ScoringStatusSchema,
  /** 0–100; null until completed. */
  total_score: z.number().int().min(0).max(100).nullable(),
  /** Turn 1: the dimension assessments and the holistic narrative. */
  score_analysis: z.string().nullable(),
  /** Turn 2: missing tools and improvements to existing ones. */
  tool_improvement_report: z.string().nullable(),
  /** The vocabulary's terms found in the analysis; null until completed. */
  failure_tags: z.array(FailureTagSchema).nullable(),
  /** sha256 of the judge's prompts, so scores from different prompts are told apart. */
  prompt_hash: z.string(),
  /** `auto` (the chain's `scoring.enabled`) or the user who asked. */
  score_triggered_by: z.string(),
  error_message: z.string().nullable(),
  started_at: TimestampSchema,
  completed_at: TimestampSchema.nullable(),
});
export type SessionScore = z.infer<typeof SessionScoreSchema>;

/** `POST /api/v1/sessions/:id/score` → 202. */
export const ScoreSessionResponseSchema = z.object({ score_id: IdSchema });
export type ScoreSessionResponse = z.infer<typeof ScoreSessionResponseSchema>;

// --- review ---

export const ReviewStatusSchema = z.enum(["needs_review", "in_progress", "reviewed"]);
export type ReviewStatus = z.infer<typeof ReviewStatusSchema>;

export const QualityRatingSchema = z.enum(["accurate", "partially_accurate", "inaccurate"]);
export type QualityRating = z.infer<typeof QualityRatingSchema>;

export const ReviewActionSchema = z.enum([
  "claim",
  "unclaim",
  "complete",
  "reopen",
  "update_feedback",
  "acknowledge",
]);
export type ReviewAction = z.infer<typeof ReviewActionSchema>;

/** The most session ids one review request may name. */
export const MAX_REVIEW_SESSION_IDS = 50;

/** `PATCH /api/v1/sessions/review`. The actor is the caller's identity, never the body. */
export const UpdateReviewRequestSchema = z
  .strictObject({
    session_ids: z.array(IdSchema).min(1).max(MAX_REVIEW_SESSION_IDS),
    action: ReviewActionSchema,
    quality_rating: QualityRatingSchema.optional(),
    action_taken: z.string().max(10_000).optional(),
    investigation_feedback: z.string().max(10_000).optional(),
    /**
     * `claim` only: take over a session someone else has in progress (the Go TARSy's
     * reassignment, which its dashboard confirms first). Without it such a claim is a
     * conflict, so of two reviewers racing for one session exactly one wins.
     */
    reassign: z.boolean().optional(),
  })
  .refine((r) => r.action !== "complete" || r.quality_rating !== undefined, {
    message: "quality_rating is required for complete",
    path: ["quality_rating"],
  })
  .refine(
    (r) =>
      r.action !== "update_feedback" ||
      r.quality_rating !== undefined ||
      r.action_taken !== undefined ||
      r.investigation_feedback !== undefined,
    {
      message: "update_feedback needs quality_rating, action_taken or investigation_feedback",
      path: ["action"],
    },
  );
export type UpdateReviewRequest = z.infer<typeof UpdateReviewRequestSchema>;

/** The review fields of a session, as on the list, the detail and the `review.status` event. */
export const ReviewStateShape = {
  /** Null while the session runs; set when it ends (a cancelled one starts as reviewed). */
  review_status: ReviewStatusSchema.nullable(),
  assignee: z.string().nullable(),
  assigned_at: TimestampSchema.nullable(),
  reviewed_at: TimestampSchema.nullable(),
  quality_rating: QualityRatingSchema.nullable(),
  action_taken: z.string().nullable(),
  investigation_feedback: z.string().nullable(),
};
export const ReviewStateSchema = z.object(ReviewStateShape);
export type ReviewState = z.infer<typeof ReviewStateSchema>;

/** One session's outcome of a review request: each changes by compare-and-swap, alone. */
export const UpdateReviewResultSchema = z.object({
  session_id: IdSchema,
  success: z.boolean(),
  /** Why not: `not_found`, or the state the action cannot apply to (a conflict). */
  error: z.string().optional(),
  /** The session's review state after the action (on success). */
  review: ReviewStateSchema.optional(),
});
export const UpdateReviewResponseSchema = z.object({
  results: z.array(UpdateReviewResultSchema),
});
export type UpdateReviewResponse = z.infer<typeof UpdateReviewResponseSchema>;

/** An append-only row for every review change. */
export const ReviewActivitySchema = z.object({
  id: IdSchema,
  actor: z.string(),
  action: ReviewActionSchema,
  from_status: ReviewStatusSchema.nullable(),
  to_status: ReviewStatusSchema,
  quality_rating: QualityRatingSchema.nullable(),
  /** The `action_taken` text as of this change. */
  note: z.string().nullable(),
  investigation_feedback: z.string().nullable(),
  created_at: TimestampSchema,
});
export type ReviewActivity = z.infer<typeof ReviewActivitySchema>;

/** `GET /api/v1/sessions/:id/review-activity`, oldest first. */
export const ReviewActivityResponseSchema = z.object({
  activities: z.array(ReviewActivitySchema),
});
export type ReviewActivityResponse = z.infer<typeof ReviewActivityResponseSchema>;

/** The triage buckets: running sessions, then the three review states. */
export const TriageGroupSchema = z.enum([
  "investigating",
  "needs_review",
  "in_progress",
  "reviewed",
]);
export type TriageGroup = z.infer<typeof TriageGroupSchema>;

/** `GET /api/v1/sessions/triage/:group` query; `assignee=` (empty) means unassigned. */
export const TriageQuerySchema = z.strictObject({
  assignee: z.string().optional(),
  page: z.coerce.number().int().positive().default(1),
  page_size: z.coerce.number().int().positive().max(200).default(20),
});
export type TriageQuery = z.infer<typeof TriageQuerySchema>;
