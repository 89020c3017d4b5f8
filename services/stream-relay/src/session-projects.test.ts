import { describe, expect, it } from "vitest";
import { createSessionProjects } from "./session-projects.ts";

/** A lookup over a table that tests change, counting the ids it was asked about. */
function table(rows: Record<string, string>) {
  const asked: string[][] = [];
  let failures = 0;
  return {
    rows,
    asked,
    failNext(n: number) {
      failures = n;
    },
    lookup: async (ids: readonly string[]) => {
      asked.push([...ids]);
      if (failures > 0) {
        failures--;
        throw new Error("connection refused");
      }
      return new Map(ids.flatMap((id) => (rows[id] ? [[id, rows[id]] as const] : [])));
    },
  };
}

describe("session projects", () => {
  it("asks once per session, in one batch, and answers later questions from the cache", async () => {
    const db = table({ s1: "alpha", s2: "beta" });
    const projects = createSessionProjects({ lookup: db.lookup, retryDelaysMs: [] });
    expect(projects.cached("s1")).toBeUndefined();
    const [first, second] = await Promise.all([
      projects.resolve(["s1", "s2", "s1"]),
      projects.resolve(["s2"]),
    ]);
    expect(Object.fromEntries(first)).toEqual({ s1: "alpha", s2: "beta" });
    expect(Object.fromEntries(second)).toEqual({ s2: "beta" });
    expect(db.asked).toEqual([["s1", "s2"]]);
    expect(projects.cached("s2")).toBe("beta");
    await projects.resolve(["s1", "s2"]);
    expect(db.asked).toHaveLength(1);
  });

  it("retries a session not found yet, and remembers a missing one only briefly", async () => {
    const db = table({});
    const projects = createSessionProjects({
      lookup: db.lookup,
      retryDelaysMs: [1, 1],
      missingTtlMs: 5_000,
    });
    const late = projects.resolve(["s1"]);
    db.rows.s1 = "alpha"; // committed while the first lookup was on its way
    expect((await late).get("s1")).toBe("alpha");

    expect((await projects.resolve(["orphan"])).get("orphan")).toBeNull();
    expect(db.asked.filter((ids) => ids.includes("orphan"))).toHaveLength(3);
    expect(projects.cached("orphan")).toBeNull();
  });

  it("rejects when the lookup keeps failing, and caches nothing", async () => {
    const db = table({ s1: "alpha" });
    const projects = createSessionProjects({ lookup: db.lookup, retryDelaysMs: [1, 1] });
    db.failNext(3);
    await expect(projects.resolve(["s1"])).rejects.toThrow(/connection refused/);
    expect(projects.cached("s1")).toBeUndefined();
    db.failNext(1);
    expect((await projects.resolve(["s1"])).get("s1")).toBe("alpha");
  });

  it("keeps at most maxEntries sessions", async () => {
    const db = table({ s1: "alpha", s2: "alpha", s3: "beta" });
    const projects = createSessionProjects({ lookup: db.lookup, maxEntries: 2 });
    await projects.resolve(["s1"]);
    await projects.resolve(["s2"]);
    await projects.resolve(["s3"]);
    expect(projects.cached("s1")).toBeUndefined();
    expect(projects.cached("s3")).toBe("beta");
  });
});
