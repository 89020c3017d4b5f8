import { MemoryListResponseSchema, MemoryResponseSchema } from "@tarsy/contracts";
import { createDb, createMemories, createSession, recordInjectedMemories } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootSystem, type System, tarsy } from "./support.ts";

const UNKNOWN = "00000000-0000-4000-8000-000000000000";

/**
 * `tarsy memory list|show|deprecate|delete` against the whole system booted as processes, on
 * memories seeded through packages/db as the reflector stores them: three learned from one
 * session (procedural/positive, semantic/negative, episodic/neutral) and one from another.
 */
describe("tarsy memory", () => {
  let sys: System;
  let source = "";
  let other = "";
  const ids = { procedural: "", semantic: "", episodic: "", elsewhere: "" };

  beforeAll(async () => {
    sys = await bootSystem();
    const db = createDb({ url: sys.database.url });
    try {
      const session = async () =>
        (
          await createSession(db.prisma, {
            project: "default",
            alertData: "memory",
            alertType: "PodCrashLooping",
            chainId: "k8s-chain",
          })
        ).session.id;
      source = await session();
      other = await session();
      const scope = (id: string) => ({
        project: "default",
        sourceSessionId: id,
        alertType: "PodCrashLooping",
        chainId: "k8s-chain",
      });
      const memory = (
        content: string,
        category: "semantic" | "episodic" | "procedural",
        valence: "positive" | "negative" | "neutral",
      ) => ({ content, category, valence, confidence: 0.7, embedding: [], embeddingModel: null });
      const [p, s, e] = await createMemories(db.prisma, scope(source), [
        memory("Check the container's memory limit before restarting it", "procedural", "positive"),
        memory("The api deployment's liveness probe is too strict", "semantic", "negative"),
        memory("On 2026-11-01 the crash loop came from a bad image tag", "episodic", "neutral"),
      ]);
      const [x] = await createMemories(db.prisma, scope(other), [
        memory("Node pressure evicts the batch pods first", "semantic", "positive"),
      ]);
      ids.procedural = p?.id ?? "";
      ids.semantic = s?.id ?? "";
      ids.episodic = e?.id ?? "";
      ids.elsewhere = x?.id ?? "";
      await recordInjectedMemories(db.prisma, other, [ids.procedural]);
    } finally {
      await db.close();
    }
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
  }, 180_000);

  const run = (...args: string[]) => tarsy(["memory", ...args], { env: sys.env });
  const idsIn = (stdout: string) =>
    Object.entries(ids)
      .filter(([, id]) => stdout.includes(id))
      .map(([name]) => name)
      .sort();

  it("lists memories as a table, filtered by category, valence, session and state", async () => {
    const all = await run("list");
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);
    const lines = all.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+CATEGORY\s+VALENCE\s+CONF\s+SEEN\s+STATE\s+CONTENT$/);
    expect(lines.at(-1)).toBe("page 1 of 1, 4 memories");
    const row = lines.find((l) => l.startsWith(ids.semantic));
    expect(row?.split(/\s{2,}/)).toEqual([
      ids.semantic,
      "semantic",
      "negative",
      "0.70",
      "1",
      "live",
      "The api deployment's liveness probe is too strict",
    ]);

    expect(idsIn((await run("list", "--category", "semantic")).stdout)).toEqual([
      "elsewhere",
      "semantic",
    ]);
    expect(idsIn((await run("list", "--valence", "neutral")).stdout)).toEqual(["episodic"]);
    expect(idsIn((await run("list", "--session", other)).stdout)).toEqual(["elsewhere"]);
    const paged = await run("list", "--session", source, "--page-size", "2", "--page", "2");
    expect(idsIn(paged.stdout)).toHaveLength(1);
    expect(paged.stdout).toContain("page 2 of 2, 3 memories");
  }, 180_000);

  it("-o json prints exactly the API's page", async () => {
    const json = await run("list", "--session", source, "-o", "json");
    expect(json.code).toBe(0);
    const page = MemoryListResponseSchema.parse(JSON.parse(json.stdout));
    expect(page.total).toBe(3);
    expect(page.memories.map((m) => m.id).sort()).toEqual(
      [ids.procedural, ids.semantic, ids.episodic].sort(),
    );
  }, 180_000);

  it("refuses bad options with exit code 2 before calling the API", async () => {
    for (const [args, flag] of [
      [["list", "--category", "hunch"], "--category"],
      [["list", "--deprecated", "yes"], "--deprecated"],
      [["list", "--page-size", "500"], "--page-size"],
      [["list", "--session", "not-a-session"], "--session"],
      [["show"], "memory id"],
      [["delete", ids.episodic, ids.semantic], "memory id"],
    ] as const) {
      const res = await run(...args);
      expect([args.join(" "), res.code]).toEqual([args.join(" "), 2]);
      expect(res.stderr).toContain(flag);
    }
    // Nothing was deleted by the refused call.
    expect((await run("show", ids.episodic)).code).toBe(0);
  }, 180_000);

  it("shows one memory in full; an unknown one exits 1 naming memory_not_found", async () => {
    const shown = await run("show", ids.procedural);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^Memory\\s+${ids.procedural}$`, "m"));
    expect(shown.stdout).toMatch(/^Category\s+procedural$/m);
    expect(shown.stdout).toMatch(/^Valence\s+positive$/m);
    expect(shown.stdout).toMatch(new RegExp(`^Learned from\\s+${source}$`, "m"));
    expect(shown.stdout.trimEnd().split("\n").at(-1)).toBe(
      "Check the container's memory limit before restarting it",
    );
    const json = MemoryResponseSchema.parse(
      JSON.parse((await run("show", ids.procedural, "--json")).stdout),
    );
    expect(json.id).toBe(ids.procedural);

    const unknown = await run("show", UNKNOWN);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("memory_not_found");
  }, 180_000);

  it("deprecates a memory, makes it live again with --undo, and deletes it", async () => {
    const deprecated = await run("deprecate", ids.semantic);
    expect([deprecated.code, deprecated.stdout]).toEqual([
      0,
      `memory ${ids.semantic}: deprecated\n`,
    ]);
    expect(idsIn((await run("list", "--deprecated", "true")).stdout)).toEqual(["semantic"]);
    expect(idsIn((await run("list", "--deprecated", "false")).stdout)).not.toContain("semantic");

    const undone = await run("deprecate", ids.semantic, "--undo", "-o", "json");
    expect(undone.code).toBe(0);
    expect(MemoryResponseSchema.parse(JSON.parse(undone.stdout)).deprecated).toBe(false);
    expect(idsIn((await run("list", "--deprecated", "true")).stdout)).toEqual([]);

    const deleted = await run("delete", ids.episodic);
    expect([deleted.code, deleted.stdout]).toEqual([0, `memory ${ids.episodic}: deleted\n`]);
    expect((await run("show", ids.episodic)).code).toBe(1);
    expect(idsIn((await run("list")).stdout)).not.toContain("episodic");
    const again = await run("delete", ids.episodic);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("memory_not_found");
  }, 180_000);
});
