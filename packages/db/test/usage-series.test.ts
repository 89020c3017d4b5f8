import { describe, expect } from "vitest";
import { createSession, getUsageSeries, UnknownTimeZoneError } from "../src/index.ts";
import { backdateSession } from "../src/testing.ts";
import { dbTest as test } from "./support.ts";

const WINDOW = {
  start: new Date("2026-03-01T00:00:00Z"),
  end: new Date("2026-03-03T00:00:00Z"),
};

describe("getUsageSeries", () => {
  test("a zone name PostgreSQL does not know is an UnknownTimeZoneError", async ({ db }) => {
    const err = await getUsageSeries(db.prisma, { ...WINDOW, timeZone: "Mars/Olympus_Mons" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnknownTimeZoneError);
    expect((err as UnknownTimeZoneError).timeZone).toBe("Mars/Olympus_Mons");
  });

  test("a session on a local day, and the days without sessions as zeros", async ({ db }) => {
    const { session } = await createSession(db.prisma, {
      project: "default",
      alertData: "a",
      alertType: "kubernetes",
      chainId: "k8s-chain",
    });
    await backdateSession(db.prisma, session.id, new Date("2026-03-01T23:30:00Z"));
    const utc = await getUsageSeries(db.prisma, { ...WINDOW, timeZone: "UTC" });
    const tokyo = await getUsageSeries(db.prisma, { ...WINDOW, timeZone: "Asia/Tokyo" });
    expect(utc.points.map((p) => [p.date, p.sessionCount])).toEqual([
      ["2026-03-01", 1],
      ["2026-03-02", 0],
    ]);
    expect(tokyo.points.map((p) => [p.date, p.sessionCount])).toEqual([
      ["2026-03-01", 0],
      ["2026-03-02", 1],
      ["2026-03-03", 0],
    ]);
    expect(tokyo).toMatchObject({ models: [], costCompleteness: "none", unpricedTokens: 0 });
  });
});
