import { copyFile, mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { createDb, createMemories, deprecateMemories, recordInjectedMemories } from "@tarsy/db";
import { insertSessionRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousAxeViolations, showTheme, THEMES } from "../../packages/dashboard/testing/axe.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, SCREENSHOTS, startDashboardRig } from "./support.ts";

const README_SHOTS = resolve(ROOT, "packages/dashboard/docs/screenshots");

const CONTENT = {
  limit: "Check the container's memory limit before restarting a crash-looping pod",
  probe: "The payments-api liveness probe fails while the JVM warms up",
  tag: "On 2026-11-20 the crash loop came from a bad image tag",
  eviction: "Node pressure evicts batch pods before web pods",
} as const;
type Name = keyof typeof CONTENT;

/**
 * Investigation memory in Chromium against the whole system, on memories seeded as the
 * reflector stores them: `earlier` (a finished PodCrashLooping session) taught limit
 * (procedural, positive), probe (semantic, negative) and tag (episodic, neutral, deprecated);
 * `later` was given limit and probe and taught eviction (semantic, positive).
 */
describe("the Memories page and the session's memory cards", () => {
  let rig: DashboardRig;
  let earlier = "";
  let later = "";
  const ids = {} as Record<Name, string>;

  beforeAll(async () => {
    rig = await startDashboardRig();
    const db = createDb({ url: rig.system.database.url });
    try {
      // Finished sessions without their outbox messages: nothing runs them.
      const session = async () =>
        (
          await insertSessionRows(db.prisma, {
            count: 1,
            alertType: "PodCrashLooping",
            chainId: "k8s-chain",
            alertData: "memory",
            status: "completed",
          })
        )[0] ?? "";
      earlier = await session();
      later = await session();
      const scope = (id: string) => ({
        project: "default",
        sourceSessionId: id,
        alertType: "PodCrashLooping",
        chainId: "k8s-chain",
      });
      const memory = (
        name: Name,
        category: "semantic" | "episodic" | "procedural",
        valence: "positive" | "negative" | "neutral",
      ) => ({
        content: CONTENT[name],
        category,
        valence,
        confidence: 0.7,
        embedding: [],
        embeddingModel: null,
      });
      const [limit, probe, tag] = await createMemories(db.prisma, scope(earlier), [
        memory("limit", "procedural", "positive"),
        memory("probe", "semantic", "negative"),
        memory("tag", "episodic", "neutral"),
      ]);
      const [eviction] = await createMemories(db.prisma, scope(later), [
        memory("eviction", "semantic", "positive"),
      ]);
      ids.limit = limit?.id ?? "";
      ids.probe = probe?.id ?? "";
      ids.tag = tag?.id ?? "";
      ids.eviction = eviction?.id ?? "";
      await deprecateMemories(db.prisma, "default", [ids.tag]);
      await recordInjectedMemories(db.prisma, later, [ids.limit]);
      await recordInjectedMemories(db.prisma, later, [ids.probe]);
    } finally {
      await db.close();
    }
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  /** Waits for the rows of the URL's query (not the previous ones) and names them. */
  async function listed(query: string): Promise<Name[]> {
    const { page } = rig;
    await page.locator(`[data-testid="memories-loaded"][data-query="${query}"]`).waitFor();
    const shown = await page
      .locator("tr[data-memory-id]")
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-memory-id") ?? ""));
    const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name as Name]));
    return shown.map((id) => byId.get(id) ?? (id as Name)).sort();
  }
  const row = (name: Name) => rig.page.locator(`tr[data-memory-id="${ids[name]}"]`);
  const cells = (name: Name) =>
    row(name)
      .locator("td")
      .evaluateAll((tds) => tds.map((td) => td.textContent?.trim() ?? ""));

  it("is reached from the app bar and lists the memories with their kind, confidence and source", async () => {
    const { page } = rig;
    const scripts: string[] = [];
    page.on("request", (r) => {
      if (r.resourceType() === "script") scripts.push(r.url());
    });
    await page.goto(rig.url("/"));
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    expect(scripts.some((s) => s.includes("MemoriesPage"))).toBe(false);
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Memories" })
      .click();
    await page.getByRole("heading", { name: "Memories", level: 1 }).waitFor();
    expect(scripts.some((s) => s.includes("MemoriesPage"))).toBe(true);
    expect(await listed("")).toEqual(["eviction", "limit", "probe", "tag"]);
    expect(await page.getByTestId("memories-total").textContent()).toBe("4 memories");

    const [content, kind, confidence, seen, source, , actions] = await cells("probe");
    expect([content, kind, confidence, seen, source]).toEqual([
      CONTENT.probe,
      "semanticnegative",
      "0.70",
      "1",
      `PodCrashLooping · ${earlier.slice(0, 8)}`,
    ]);
    expect(actions).toBe("DeprecateDelete");
    expect(await row("probe").locator('[data-chip="valence"]').getAttribute("class")).toContain(
      "colorError",
    );
    expect((await cells("tag"))[1]).toBe("episodicneutraldeprecated");
    expect((await cells("tag"))[6]).toBe("UndeprecateDelete");
    await rig.shot("memories");

    await row("eviction").getByRole("link").click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/sessions/${later}`);
  }, 90_000);

  it("filters by category, valence and state, kept in the URL", async () => {
    const { page } = rig;
    await page.goto(rig.url("/memories"));
    await listed("");
    await page.getByLabel("Category", { exact: true }).selectOption("semantic");
    await expect.poll(() => new URL(page.url()).search).toBe("?category=semantic");
    expect(await listed("category=semantic")).toEqual(["eviction", "probe"]);
    await page.getByLabel("Valence", { exact: true }).selectOption("negative");
    expect(await listed("category=semantic&valence=negative")).toEqual(["probe"]);
    await page.getByLabel("Category", { exact: true }).selectOption("");
    await page.getByLabel("Valence", { exact: true }).selectOption("");
    await page.getByLabel("State", { exact: true }).selectOption("deprecated");
    await expect.poll(() => new URL(page.url()).search).toBe("?deprecated=true");
    expect(await listed("deprecated=true")).toEqual(["tag"]);
    await page.getByLabel("State", { exact: true }).selectOption("live");
    expect(await listed("deprecated=false")).toEqual(["eviction", "limit", "probe"]);
    // A link with the filters opens the same rows.
    await page.goto(rig.url("/memories?valence=neutral"));
    expect(await listed("valence=neutral")).toEqual(["tag"]);
    expect(await page.getByLabel("Valence", { exact: true }).inputValue()).toBe("neutral");
    await page.goto(rig.url("/memories?category=procedural&valence=negative"));
    await listed("category=procedural&valence=negative");
    await page.getByText("No memories match these filters.").waitFor();
  }, 60_000);

  it("deprecates a memory and makes it live again", async () => {
    const { page } = rig;
    await page.goto(rig.url("/memories?deprecated=false"));
    expect(await listed("deprecated=false")).toContain("eviction");
    await row("eviction").getByRole("button", { name: "Deprecate" }).click();
    // Reloaded after the change: the live list no longer has it.
    await row("eviction").waitFor({ state: "detached" });
    const stored = await rig.system.api<{ deprecated: boolean }>(
      `/api/v1/memories/${ids.eviction}`,
    );
    expect(stored.body.deprecated).toBe(true);

    await page.goto(rig.url("/memories?deprecated=true"));
    expect(await listed("deprecated=true")).toEqual(["eviction", "tag"]);
    await row("eviction").getByRole("button", { name: "Undeprecate" }).click();
    await row("eviction").waitFor({ state: "detached" });
    expect(
      (await rig.system.api<{ deprecated: boolean }>(`/api/v1/memories/${ids.eviction}`)).body
        .deprecated,
    ).toBe(false);
  }, 60_000);

  it("deletes a memory only after the confirmation", async () => {
    const { page } = rig;
    await page.goto(rig.url("/memories"));
    await listed("");
    await row("tag").getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this memory?" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(CONTENT.tag);
    await dialog.getByRole("button", { name: "Keep it" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await rig.system.api(`/api/v1/memories/${ids.tag}`)).status).toBe(200);

    await row("tag").getByRole("button", { name: "Delete" }).click();
    await dialog.getByRole("button", { name: "Delete" }).click();
    await row("tag").waitFor({ state: "detached" });
    expect(await page.getByTestId("memories-total").textContent()).toBe("3 memories");
    expect((await rig.system.api(`/api/v1/memories/${ids.tag}`)).status).toBe(404);
  }, 60_000);

  it("shows a session's injected memories and those learned from it", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${later}`));
    const injected = page.getByRole("list", { name: "Injected memories" });
    const learned = page.getByRole("list", { name: "Learned from this session" });
    await page.getByRole("heading", { name: "Injected memories", level: 2 }).waitFor();
    await page.getByRole("heading", { name: "Learned from this session", level: 2 }).waitFor();
    const items = (list: typeof injected) =>
      list
        .getByRole("listitem")
        .evaluateAll((lis) =>
          lis.map((li) => [
            li.querySelector(".MuiListItemText-primary")?.textContent ?? "",
            [...li.querySelectorAll(".MuiChip-label")].map((c) => c.textContent).join(" "),
          ]),
        );
    expect(await items(injected)).toEqual([
      [CONTENT.limit, "procedural positive"],
      [CONTENT.probe, "semantic negative"],
    ]);
    expect(await items(learned)).toEqual([[CONTENT.eviction, "semantic positive"]]);
    await rig.shot("session-memories");

    // The earlier session was given nothing: only its learned card, once both lists answered.
    const answered = page.waitForResponse((r) =>
      r.url().endsWith(`/api/v1/sessions/${earlier}/injected-memories`),
    );
    await page.goto(rig.url(`/sessions/${earlier}`));
    await answered;
    await page.getByRole("list", { name: "Learned from this session" }).waitFor();
    expect(
      await page
        .getByRole("list", { name: "Learned from this session" })
        .getByRole("listitem")
        .count(),
    ).toBe(2);
    expect(await page.getByRole("heading", { name: "Injected memories" }).count()).toBe(0);
  }, 60_000);

  it("has no serious accessibility violations, in both themes", async () => {
    const { page } = rig;
    const found: Record<string, unknown> = {};
    for (const theme of THEMES) {
      for (const path of ["/memories", `/sessions/${later}`]) {
        await page.goto(rig.url(path));
        if (path === "/memories") await listed("");
        else await page.getByRole("list", { name: "Learned from this session" }).waitFor();
        await showTheme(page, theme);
        const violations = await seriousAxeViolations(page);
        if (violations.length) found[`${theme} ${path}`] = violations;
        if (theme === "dark" && path === "/memories") {
          await page.mouse.move(700, 1200); // no tooltip of the theme button in the picture
          await page.getByRole("tooltip").waitFor({ state: "hidden" });
          await rig.shot("memories-dark");
        }
      }
    }
    expect(found).toEqual({});
    // The README's pictures come from this run.
    await mkdir(README_SHOTS, { recursive: true });
    for (const name of ["memories.png", "memories-dark.png", "session-memories.png"]) {
      await copyFile(resolve(SCREENSHOTS, name), resolve(README_SHOTS, name));
    }
  }, 90_000);
});
