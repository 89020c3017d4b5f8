/**
 * The team's review of ended sessions (the Go TARSy's workflow, ADR-0009/0013/0016): the
 * initial state a session gets when it ends, each review action as a compare-and-swap with
 * its append-only activity rows and its `review.status` outbox event in one transaction, the
 * activity log, and the triage groups.
 */
import {
  ACTIVE_SESSION_STATUSES,
  type QualityRating,
  type ReviewAction,
  type ReviewState,
  type ReviewStatus,
  type SessionStatus,
} from "@tarsy/contracts";
import { type DbClient, inTransaction, type Tx } from "./client.ts";
import { requestFeedbackReflection } from "./feedback-reflections.ts";
import type { AlertSession, Prisma, SessionReviewActivity } from "./generated/prisma/client.ts";
import { applyRatingToMemories } from "./memories.ts";
import { enqueueOutbox, type OutboxEntry } from "./outbox.ts";
import { getSessionStats, type SessionStats } from "./session-stats.ts";

/** Who caused the initial review state of a session that ended. */
export const SYSTEM_REVIEW_ACTOR = "system";

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** The review fields of a session row, as the API and the `review.status` event carry them. */
export function reviewStateOf(s: AlertSession): ReviewState {
  return {
    review_status: s.reviewStatus,
    assignee: s.assignee,
    assigned_at: iso(s.assignedAt),
    reviewed_at: iso(s.reviewedAt),
    quality_rating: s.qualityRating,
    action_taken: s.actionTaken,
    investigation_feedback: s.investigationFeedback,
  };
}

function queueReviewStatus(
  tx: Tx,
  session: AlertSession,
  actor: string,
  at: Date,
  activityId?: string,
): Promise<OutboxEntry<"reviewStatus">> {
  return enqueueOutbox(tx, "reviewStatus", {
    v: 1,
    type: "review.status",
    session_id: session.id,
    ...reviewStateOf(session),
    actor,
    ...(activityId === undefined ? {} : { activity_id: activityId }),
    timestamp: at.toISOString(),
  });
}

/**
 * Gives a session that just ended its initial review state, with its `review.status` event
 * (actor `system`): `needs_review`, or `reviewed` without rating or assignee for a cancelled
 * one. Only while `review_status` is still null, so a redelivered end never rewrites it.
 * Call inside the transaction that ended the session (`transitionSessionStatus` does).
 */
export function initializeReview(
  client: DbClient,
  id: string,
  ended: SessionStatus,
  at: Date,
): Promise<boolean> {
  return inTransaction(client, async (tx) => {
    const { count } = await tx.alertSession.updateMany({
      where: { id, reviewStatus: null },
      data:
        ended === "cancelled"
          ? { reviewStatus: "reviewed", reviewedAt: at }
          : { reviewStatus: "needs_review" },
    });
    if (count === 0) return false;
    const session = await tx.alertSession.findUniqueOrThrow({ where: { id } });
    await queueReviewStatus(tx, session, SYSTEM_REVIEW_ACTOR, at);
    return true;
  });
}

export interface ReviewChange {
  readonly action: ReviewAction;
  /** The caller's identity (never the request body). */
  readonly actor: string;
  readonly qualityRating?: QualityRating;
  readonly actionTaken?: string;
  readonly investigationFeedback?: string;
  /** `claim` of a session someone else has in progress takes it over (else a conflict). */
  readonly reassign?: boolean;
  /**
   * Investigation memory is on: written feedback of a completed review is reflected on
   * (once per feedback text) by the feedback reflector.
   */
  readonly reflectFeedback?: boolean;
  readonly now?: Date;
}

export type ReviewResult =
  | {
      readonly outcome: "applied";
      readonly session: AlertSession;
      /** The rows this change appended (an implicit claim first). */
      readonly activities: SessionReviewActivity[];
      readonly event: OutboxEntry<"reviewStatus">;
      /** The feedback reflector's work, when this change brought feedback not reflected on. */
      readonly feedbackReflection: OutboxEntry<"feedbackSubmitted"> | null;
    }
  | { readonly outcome: "not_found" }
  | {
      readonly outcome: "conflict";
      /** The review state the action cannot apply to (null: the session is still running). */
      readonly reviewStatus: ReviewStatus | null;
      readonly assignee: string | null;
      readonly message: string;
    };

type Step = {
  action: ReviewAction;
  from: ReviewStatus;
  to: ReviewStatus;
};

interface Plan {
  /** The compare half of the swap: the state the session must still be in. */
  expect: { reviewStatus: ReviewStatus; assignee: string | null };
  set: Prisma.AlertSessionUpdateManyMutationInput;
  steps: Step[];
}

type Snapshot = Pick<AlertSession, "reviewStatus" | "assignee">;

/** The transition an action makes from the state the session was read in, or why none. */
function planOf(change: ReviewChange, current: Snapshot, now: Date): Plan | string {
  const { reviewStatus: status, assignee } = current;
  const expect = { reviewStatus: status as ReviewStatus, assignee };
  const terminal = (action: "complete" | "acknowledge"): Plan | string => {
    const fields =
      action === "complete"
        ? {
            qualityRating: change.qualityRating ?? null,
            actionTaken: change.actionTaken ?? null,
            investigationFeedback: change.investigationFeedback ?? null,
          }
        : {};
    const done: Step = { action, from: "in_progress", to: "reviewed" };
    if (status === "in_progress") {
      return {
        expect,
        set: { reviewStatus: "reviewed", reviewedAt: now, ...fields },
        steps: [done],
      };
    }
    if (status === "needs_review") {
      // Direct from the queue: the reviewer claims it implicitly (logged as its own row).
      return {
        expect,
        set: {
          reviewStatus: "reviewed",
          reviewedAt: now,
          assignee: change.actor,
          assignedAt: now,
          ...fields,
        },
        steps: [{ action: "claim", from: "needs_review", to: "in_progress" }, done],
      };
    }
    if (status === "reviewed") {
      // The Go TARSy's upgrades and downgrades: rate an acknowledged session (complete), or
      // take a rating back (acknowledge clears it). The session stays reviewed.
      return {
        expect,
        set: { reviewedAt: now, ...(action === "complete" ? fields : { qualityRating: null }) },
        steps: [{ action, from: "reviewed", to: "reviewed" }],
      };
    }
    return `cannot ${action} a session that is ${status}`;
  };
  switch (change.action) {
    case "claim":
      if (status === "needs_review") {
        return {
          expect,
          set: { reviewStatus: "in_progress", assignee: change.actor, assignedAt: now },
          steps: [{ action: "claim", from: "needs_review", to: "in_progress" }],
        };
      }
      if (status === "in_progress") {
        if (assignee === change.actor) return `session is already claimed by ${assignee}`;
        if (!change.reassign) {
          return `session is claimed by ${assignee ?? "nobody"}; claim with reassign to take it over`;
        }
        return {
          expect,
          set: { assignee: change.actor, assignedAt: now },
          steps: [{ action: "claim", from: "in_progress", to: "in_progress" }],
        };
      }
      return `cannot claim a session that is ${status}`;
    case "unclaim":
      if (status !== "in_progress") return `cannot unclaim a session that is ${status}`;
      return {
        expect,
        set: { reviewStatus: "needs_review", assignee: null, assignedAt: null },
        steps: [{ action: "unclaim", from: "in_progress", to: "needs_review" }],
      };
    case "complete":
    case "acknowledge":
      return terminal(change.action);
    case "reopen":
      if (status !== "reviewed") return `cannot reopen a session that is ${status}`;
      return {
        expect,
        set: {
          reviewStatus: "needs_review",
          assignee: null,
          assignedAt: null,
          reviewedAt: null,
          qualityRating: null,
          actionTaken: null,
          investigationFeedback: null,
        },
        steps: [{ action: "reopen", from: "reviewed", to: "needs_review" }],
      };
    case "update_feedback":
      if (status !== "reviewed") return `cannot update the feedback of a session that is ${status}`;
      return {
        expect,
        set: {
          ...(change.qualityRating === undefined ? {} : { qualityRating: change.qualityRating }),
          ...(change.actionTaken === undefined ? {} : { actionTaken: change.actionTaken }),
          ...(change.investigationFeedback === undefined
            ? {}
            : { investigationFeedback: change.investigationFeedback }),
        },
        steps: [{ action: "update_feedback", from: "reviewed", to: "reviewed" }],
      };
    default:
      return change.action satisfies never;
  }
}

/**
 * Applies one review action to one session: a conditional UPDATE on the review state (and
 * assignee) it was read in — zero rows is a conflict, so of two racing reviewers one wins —
 * its activity row(s) and its `review.status` event, in one transaction. A running session
 * (no review state yet) is a conflict; a missing or deleted one `not_found`.
 */
export function applyReviewAction(
  client: DbClient,
  id: string,
  change: ReviewChange,
): Promise<ReviewResult> {
  const now = change.now ?? new Date();
  return inTransaction(client, async (tx) => {
    const current = await tx.alertSession.findFirst({
      where: { id, deletedAt: null },
      select: { reviewStatus: true, assignee: true },
    });
    if (!current) return { outcome: "not_found" } as const;
    const conflict = (message: string, seen: Snapshot = current) =>
      ({
        outcome: "conflict",
        reviewStatus: seen.reviewStatus,
        assignee: seen.assignee,
        message,
      }) as const;
    if (current.reviewStatus === null) {
      return conflict("the session is still being investigated; it has no review yet");
    }
    const plan = planOf(change, current, now);
    if (typeof plan === "string") return conflict(plan);
    const { count } = await tx.alertSession.updateMany({
      where: { id, deletedAt: null, ...plan.expect },
      data: plan.set,
    });
    if (count === 0) {
      // Someone else changed it between the read and the swap.
      const seen = await tx.alertSession.findFirst({
        where: { id },
        select: { reviewStatus: true, assignee: true },
      });
      return conflict(
        `the session changed meanwhile (now ${seen?.reviewStatus ?? "gone"}${seen?.assignee ? `, ${seen.assignee}` : ""})`,
        seen ?? current,
      );
    }
    const session = await tx.alertSession.findUniqueOrThrow({ where: { id } });
    // A rating refines what was learned from the session (investigation memory).
    if (change.action === "complete" && session.qualityRating !== null) {
      await applyRatingToMemories(tx, id, session.qualityRating);
    }
    const activities: SessionReviewActivity[] = [];
    for (const [i, step] of plan.steps.entries()) {
      const last = i === plan.steps.length - 1;
      activities.push(
        await tx.sessionReviewActivity.create({
          data: {
            sessionId: id,
            actor: change.actor,
            action: step.action,
            fromStatus: step.from,
            toStatus: step.to,
            qualityRating: last ? session.qualityRating : null,
            note: last ? session.actionTaken : null,
            investigationFeedback: last ? session.investigationFeedback : null,
            // An implicit claim is a millisecond earlier, so the history reads in order.
            createdAt: new Date(now.getTime() - (plan.steps.length - 1 - i)),
          },
        }),
      );
    }
    const event = await queueReviewStatus(tx, session, change.actor, now, activities.at(-1)?.id);
    // Written feedback of a reviewed session teaches the memory too (once per text).
    const reflects =
      change.reflectFeedback === true &&
      session.reviewStatus === "reviewed" &&
      (change.action === "complete" || change.action === "update_feedback");
    const feedbackReflection = reflects
      ? await requestFeedbackReflection(tx, session, change.actor, now)
      : null;
    return { outcome: "applied", session, activities, event, feedbackReflection } as const;
  });
}

/** A session's review history, oldest first (null when it does not exist or was deleted). */
export async function listReviewActivity(
  client: DbClient,
  id: string,
): Promise<SessionReviewActivity[] | null> {
  const session = await client.alertSession.findFirst({
    where: { id, deletedAt: null },
    select: { id: true },
  });
  if (!session) return null;
  return client.sessionReviewActivity.findMany({
    where: { sessionId: id },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

export type TriageGroupKey = "investigating" | "needs_review" | "in_progress" | "reviewed";

export interface TriageFilter {
  /** Exact assignee; the empty string means unassigned. */
  readonly assignee?: string;
  /** Only sessions of these projects (the caller's visible ones); none: every project. */
  readonly projects?: readonly string[];
  /** 1-based (default 1). */
  readonly page?: number;
  /** Default 20, at most 200. */
  readonly pageSize?: number;
}

export interface TriagePage {
  readonly items: AlertSession[];
  readonly stats: Map<string, SessionStats>;
  readonly total: number;
  readonly page: number;
  readonly pageSize: number;
}

/**
 * One triage group, a page at a time, with the same per-page aggregates as the list:
 * `investigating` is every session not ended yet (newest first); the others are the sessions
 * in that review state, most recently ended first.
 */
export async function listTriageGroup(
  client: DbClient,
  group: TriageGroupKey,
  filter: TriageFilter = {},
): Promise<TriagePage> {
  const page = Math.max(1, filter.page ?? 1);
  const pageSize = Math.min(200, Math.max(1, filter.pageSize ?? 20));
  const where: Prisma.AlertSessionWhereInput = {
    deletedAt: null,
    ...(group === "investigating"
      ? { status: { in: [...ACTIVE_SESSION_STATUSES] }, reviewStatus: null }
      : { reviewStatus: group }),
    ...(filter.projects === undefined ? {} : { project: { in: [...filter.projects] } }),
    ...(filter.assignee === undefined
      ? {}
      : { assignee: filter.assignee === "" ? null : filter.assignee }),
  };
  const orderBy: Prisma.AlertSessionOrderByWithRelationInput[] =
    group === "investigating"
      ? [{ createdAt: "desc" }, { id: "desc" }]
      : [{ completedAt: { sort: "desc", nulls: "last" } }, { createdAt: "desc" }, { id: "desc" }];
  const [items, total] = await Promise.all([
    client.alertSession.findMany({ where, orderBy, skip: (page - 1) * pageSize, take: pageSize }),
    client.alertSession.count({ where }),
  ]);
  const stats = await getSessionStats(
    client,
    items.map((s) => s.id),
  );
  return { items, stats, total, page, pageSize };
}
