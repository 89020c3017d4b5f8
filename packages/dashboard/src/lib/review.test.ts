import { describe, expect, it } from "vitest";
import { isAcknowledged, reviewFailures, scoreBand, scoreBlocker } from "./review.ts";

describe("review vocabulary", () => {
  it("bands scores as the Go TARSy does", () => {
    expect([100, 60, 59, 35, 34, 0].map(scoreBand)).toEqual([
      "good",
      "good",
      "partial",
      "partial",
      "poor",
      "poor",
    ]);
  });

  it("tells an acknowledgement from a rated review", () => {
    expect(isAcknowledged({ review_status: "reviewed", quality_rating: null })).toBe(true);
    expect(isAcknowledged({ review_status: "reviewed", quality_rating: "accurate" })).toBe(false);
    expect(isAcknowledged({ review_status: "needs_review", quality_rating: null })).toBe(false);
  });

  it("says why a session cannot be scored", () => {
    expect(scoreBlocker({ status: "in_progress", scoring_status: null })).toBe(
      "The session has not ended yet",
    );
    expect(scoreBlocker({ status: "completed", scoring_status: "in_progress" })).toBe(
      "Scoring is in progress",
    );
    expect(scoreBlocker({ status: "failed", scoring_status: "completed" })).toBeNull();
  });

  it("lists the sessions a review request could not change", () => {
    expect(
      reviewFailures({
        results: [
          { session_id: "a", success: true },
          { session_id: "b", success: false, error: "conflict: reviewed" },
          { session_id: "c", success: false },
        ],
      }),
    ).toEqual([
      { session_id: "b", error: "conflict: reviewed" },
      { session_id: "c", error: "failed" },
    ]);
  });
});
