import { randomUUID } from "node:crypto";
import { describe, expect } from "vitest";
import { appendAudit, getSessionProjects, listAudit, softDeleteSession } from "../src/index.ts";
import { forceSessionProject } from "../src/testing.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

describe("session projects", () => {
  test("maps each stored session to its project; unknown and malformed ids are absent", async ({
    db,
  }) => {
    const a = await newSession(db.prisma);
    const b = await newSession(db.prisma);
    const deleted = await newSession(db.prisma);
    await forceSessionProject(db.prisma, b.id, "payments");
    await forceSessionProject(db.prisma, deleted.id, "payments");
    await softDeleteSession(db.prisma, deleted.id);
    const missing = randomUUID();

    const projects = await getSessionProjects(db.prisma, [
      a.id,
      b.id,
      b.id,
      deleted.id,
      missing,
      "not-a-uuid",
    ]);
    expect(Object.fromEntries(projects)).toEqual({
      [a.id]: "default",
      [b.id]: "payments",
      [deleted.id]: "payments",
    });
    expect(await getSessionProjects(db.prisma, [])).toEqual(new Map());
    expect(await getSessionProjects(db.prisma, ["x"])).toEqual(new Map());
  });
});

describe("a session's project", () => {
  test("is a NOT NULL column with a (project, created_at) index; a NULL project is refused", async ({
    db,
  }) => {
    const columns = await db.prisma.$queryRawUnsafe<{ is_nullable: string }[]>(
      `SELECT is_nullable FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'alert_sessions' AND column_name = 'project'`,
    );
    expect(columns).toEqual([{ is_nullable: "NO" }]);
    const indexes = await db.prisma.$queryRawUnsafe<{ indexdef: string }[]>(
      `SELECT indexdef FROM pg_indexes
        WHERE schemaname = current_schema() AND indexname = 'alert_sessions_project_created_at_idx'`,
    );
    expect(indexes).toHaveLength(1);
    expect(indexes[0]?.indexdef).toMatch(
      /ON \S*alert_sessions USING btree \(project, created_at\)/,
    );
    const session = await newSession(db.prisma);
    await expect(
      db.prisma.$executeRawUnsafe(
        `UPDATE alert_sessions SET project = NULL WHERE id = '${session.id}'::uuid`,
      ),
    ).rejects.toThrow(/null value in column "project"/);
  });
});

describe("the audit log", () => {
  test("is append-only: UPDATE, DELETE and TRUNCATE are refused by the database", async ({
    db,
  }) => {
    await appendAudit(db.prisma, {
      actor: "adam",
      identitySource: "proxy",
      action: "cancel",
      outcome: "allowed",
      method: "POST",
      path: "/api/v1/sessions/x/cancel",
      status: 202,
      remoteAddr: "10.1.2.3",
    });
    const [row] = await listAudit(db.prisma, { limit: 1 });
    expect(row).toMatchObject({ actor: "adam", remoteAddr: "10.1.2.3" });
    for (const sql of [
      `UPDATE audit_log SET actor = 'mallory'`,
      `DELETE FROM audit_log`,
      `TRUNCATE audit_log`,
    ]) {
      await expect(db.prisma.$executeRawUnsafe(sql), sql).rejects.toThrow(/append-only/);
    }
    const rows = await listAudit(db.prisma, { limit: 10 });
    expect(rows.map((r) => [r.id, r.actor])).toEqual([[row?.id, "adam"]]);
  });
});
