import { randomUUID } from "node:crypto";
import {
  DeadLetterListResponseSchema,
  DeadLetterRedriveResponseSchema,
  WORK_SUBJECTS,
} from "@tarsy/contracts";
import { listAudit } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AUTHZ_CONFIG_DIR,
  conforms,
  type ErrorBody,
  eventually,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

/**
 * The dead letters through the API: the bus operations `tarsy dlq` runs against NATS, here
 * under the policy (administrators of every project) and audited.
 */

const as = (user: string, groups: string) => ({
  "x-forwarded-user": user,
  "x-forwarded-groups": groups,
});
const ADMIN = as("adam", "admins");
const ADMIN_A = as("ada", "admins-a");
const OPERATOR = as("olga", "operators-a");

type DeadLetters = { dead_letters: { seq: number; original_subject: string }[]; more: boolean };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ configDir: AUTHZ_CONFIG_DIR });
});
afterAll(async () => {
  await h?.close();
});

/** A session_submitted message the orchestrator gave up on, as its consumer dead-letters it. */
async function deadLetter(sessionId: string): Promise<void> {
  await h.bus.publish("deadLetter", {
    v: 1,
    original_subject: WORK_SUBJECTS.sessionSubmitted,
    stream: "work",
    stream_seq: Math.floor(Math.random() * 1e9),
    deliveries: 5,
    error: "handler failed 5 times",
    data: JSON.stringify({
      v: 1,
      session_id: sessionId,
      alert_type: "KubePodCrashLooping",
      chain_id: "crashloop-chain",
      submitted_at: new Date().toISOString(),
    }),
    failed_at: new Date().toISOString(),
  });
}

const list = (headers: Record<string, string>) =>
  request<DeadLetters & ErrorBody>(`${h.url}/api/v1/dead-letters`, { headers });
const redrive = (seq: number | string, headers: Record<string, string>) =>
  request<ErrorBody & { subject: string; duplicate: boolean }>(
    `${h.url}/api/v1/dead-letters/${seq}/redrive`,
    { method: "POST", headers },
  );

describe("dead letters", () => {
  it("an administrator of every project lists them and re-drives one to its original consumer, audited", async () => {
    const sessionId = randomUUID();
    await deadLetter(sessionId);
    const listed = await list(ADMIN);
    expect(listed.status).toBe(200);
    conforms(DeadLetterListResponseSchema, listed.body);
    expect(listed.body.dead_letters).toHaveLength(1);
    const [letter] = listed.body.dead_letters;
    expect(letter?.original_subject).toBe(WORK_SUBJECTS.sessionSubmitted);
    const seq = letter?.seq ?? 0;

    const res = await redrive(seq, ADMIN);
    expect(res.status).toBe(200);
    conforms(DeadLetterRedriveResponseSchema, res.body);
    expect(res.body.duplicate).toBe(false);
    // The orchestrator's consumer gets the original message again.
    await eventually(() => h.received.sessionSubmitted.some((m) => m.session_id === sessionId));
    expect((await list(ADMIN)).body.dead_letters).toEqual([]);
    // It is gone: a second re-drive is a 404 in the error shape.
    const again = await redrive(seq, ADMIN);
    expect([again.status, again.body.error.code]).toEqual([404, "not_found"]);
    expect(again.body.error.message).toBe(`dead letter ${seq} not found`);

    const redriven = async () =>
      (await listAudit(h.db.prisma, { limit: 50, outcome: "allowed" })).filter(
        (r) => r.path === `/api/v1/dead-letters/${seq}/redrive` && r.status === 200,
      );
    await eventually(async () => (await redriven()).length === 1);
    const [row] = await redriven();
    expect(row).toMatchObject({
      actor: "adam",
      action: "admin",
      method: "POST",
      status: 200,
      remoteAddr: "127.0.0.1",
      reason: `dead letter ${seq} redriven to ${res.body.subject}`,
    });
  });

  it("refuses an operator or a project's admin (403) and nobody (401), re-driving nothing", async () => {
    const sessionId = randomUUID();
    await deadLetter(sessionId);
    const [letter] = (await list(ADMIN)).body.dead_letters;
    const seq = letter?.seq ?? 0;
    expect(seq).toBeGreaterThan(0);
    for (const headers of [OPERATOR, ADMIN_A]) {
      const listed = await list(headers);
      expect([listed.status, listed.body.error.code]).toEqual([403, "forbidden"]);
      const refused = await redrive(seq, headers);
      expect([refused.status, refused.body.error.code]).toEqual([403, "forbidden"]);
    }
    for (const res of [await list({}), await redrive(seq, {})]) {
      expect([res.status, res.body.error.code]).toEqual([401, "unauthorized"]);
    }
    // Still there, and never delivered: the admin's list shows it and the consumer has not seen it.
    expect((await list(ADMIN)).body.dead_letters.map((d) => d.seq)).toEqual([seq]);
    expect(h.received.sessionSubmitted.some((m) => m.session_id === sessionId)).toBe(false);
    await eventually(async () => {
      const rows = await listAudit(h.db.prisma, { limit: 50, outcome: "denied" });
      return (
        rows.filter((r) => r.path === `/api/v1/dead-letters/${seq}/redrive` && r.status === 403)
          .length === 2
      );
    });
  });

  it("answers a sequence that is no number with 400", async () => {
    const res = await redrive("abc", ADMIN);
    expect([res.status, res.body.error.code]).toEqual([400, "validation_failed"]);
  });
});
