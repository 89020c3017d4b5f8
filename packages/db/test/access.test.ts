import { randomUUID } from "node:crypto";
import { describe, expect } from "vitest";
import { getSessionProjects, softDeleteSession } from "../src/index.ts";
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
