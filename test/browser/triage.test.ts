import { copyFile, mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import type { SessionDetail, UpdateReviewResponse } from "@tarsy/contracts";
import { createDb } from "@tarsy/db";
import { initializeForgedReviews, insertSessionRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousAxeViolations, showTheme, THEMES } from "../../packages/dashboard/testing/axe.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, SCREENSHOTS, startDashboardRig } from "./support.ts";

const README_SHOTS = resolve(ROOT, "packages/dashboard/docs/screenshots");
/** oauth2-proxy's identity header, as the proxy (on loopback) sends it. */
const ALICE = { "X-Forwarded-User": "alice" };
const BOB = { "X-Forwarded-User": "bob" };

/**
 * The review workflow in Chromium against the whole system (issue #21): ended sessions in
 * `needs_review` (forged rows given the state a real end gives them), reviewed by alice in the
 * page while bob acts through the API.
 */
describe("triage and review", () => {
  let rig: DashboardRig;
  /** Claimed, rated, reopened. */
  let rated = "";
  /** Acknowledged, then undone. */
  let acked = "";
  /** Claimed by bob through the API while alice watches. */
  let bobs = "";
  /** Claimed in bulk from the list (with bob's, which fails). */
  let bulk = "";

  beforeAll(async () => {
    rig = await startDashboardRig({ headers: ALICE });
    const db = createDb({ url: rig.system.database.url });
    try {
      const insert = async (alertType: string) => {
        const [id = ""] = await insertSessionRows(db.prisma, {
          count: 1,
          alertType,
          chainId: "k8s-chain",
          alertData: "review",
          status: "completed",
        });
        return id;
      };
      rated = await insert("DiskPressure");
      acked = await insert("HighLatency");
      bobs = await insert("PodCrashLooping");
      bulk = await insert("MemoryLeak");
      await initializeForgedReviews(db.prisma, [rated, acked, bobs, bulk]);
    } finally {
      await db.close();
    }
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  const group = (name: string) => rig.page.locator(`[data-group="${name}"]`);
  const rowIn = (name: string, id: string) => group(name).locator(`tr[data-session-id="${id}"]`);
  const count = (name: string) => rig.page.getByTestId(`triage-${name}-count`).textContent();
  const review = (id: string, action: string, headers: Record<string, string>) =>
    rig.system.api<UpdateReviewResponse>("/api/v1/sessions/review", {
      method: "PATCH",
      headers,
      body: JSON.stringify({ session_ids: [id], action }),
    });
  const short = (alertType: string, id: string) => `${alertType} · ${id.slice(0, 8)}`;

  it("is reached from the app bar, in a chunk of its own, with the four groups and counts", async () => {
    const { page } = rig;
    const scripts: string[] = [];
    page.on("request", (r) => {
      if (r.resourceType() === "script") scripts.push(r.url());
    });
    await page.goto(rig.url("/"));
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    expect(scripts.some((s) => s.includes("TriagePage"))).toBe(false);
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Triage" })
      .click();
    await page.getByRole("heading", { name: "Triage", level: 1 }).waitFor();
    expect(scripts.some((s) => s.includes("TriagePage"))).toBe(true);
    for (const g of ["Investigating", "Needs review", "In progress", "Reviewed"]) {
      await page.getByRole("button", { name: new RegExp(`^${g}`) }).waitFor();
    }
    await expect.poll(() => count("needs_review")).toBe("4");
    await expect.poll(() => count("in_progress")).toBe("0");
    for (const id of [rated, acked, bobs, bulk]) await rowIn("needs_review", id).waitFor();
  }, 60_000);

  it("claims, rates (complete), then reopens a session", async () => {
    const { page } = rig;
    await rowIn("needs_review", rated).getByRole("button", { name: "Claim" }).click();
    const claimed = rowIn("in_progress", rated);
    await claimed.waitFor();
    await expect.poll(() => claimed.locator(".assignee").textContent()).toBe("alice");
    await claimed
      .getByRole("button", { name: `Rate accurate (${short("DiskPressure", rated)})` })
      .click();
    // The reviewed group starts collapsed: open it to see the row.
    await page.getByRole("button", { name: /^Reviewed/ }).click();
    const done = rowIn("reviewed", rated);
    await done.waitFor();
    await done.locator('[data-rating="accurate"]').waitFor();
    await done.getByRole("button", { name: "Reopen" }).click();
    await rowIn("needs_review", rated).waitFor();
    expect(await rowIn("reviewed", rated).count()).toBe(0);
    const activity = await rig.system.api<{ activities: { action: string; actor: string }[] }>(
      `/api/v1/sessions/${rated}/review-activity`,
      { headers: ALICE },
    );
    expect(activity.body.activities.map((a) => [a.action, a.actor])).toEqual([
      ["claim", "alice"],
      ["complete", "alice"],
      ["reopen", "alice"],
    ]);
  }, 60_000);

  it("acknowledges in one click, and the snackbar's Undo reopens it", async () => {
    const { page } = rig;
    await rowIn("needs_review", acked)
      .getByRole("button", { name: `Ack ${short("HighLatency", acked)}` })
      .click();
    const row = rowIn("reviewed", acked);
    await row.waitFor();
    await row.locator('[data-review="acknowledged"]').waitFor();
    const snack = page.getByRole("alert").filter({ hasText: "Acknowledged" });
    await snack.getByText(`Acknowledged ${short("HighLatency", acked)}`).waitFor();
    await snack.getByRole("button", { name: "Undo" }).click();
    await rowIn("needs_review", acked).waitFor();
    expect(await row.count()).toBe(0);
  }, 60_000);

  it("follows another reviewer's claim live, and filters by assignee", async () => {
    const { page } = rig;
    await rowIn("needs_review", bobs).waitFor();
    const res = await review(bobs, "claim", BOB);
    expect(res.body.results[0]?.success).toBe(true);
    // No reload: the review.status event moves the row.
    const row = rowIn("in_progress", bobs);
    await row.waitFor();
    await expect.poll(() => row.locator(".assignee").textContent()).toBe("bob");
    expect(await rowIn("needs_review", bobs).count()).toBe(0);

    await page.getByRole("button", { name: "Mine", exact: true }).click();
    await expect.poll(() => new URL(page.url()).search).toBe("?assignee=mine");
    await expect.poll(() => count("in_progress")).toBe("0");
    await page.getByRole("button", { name: "Unassigned", exact: true }).click();
    await expect.poll(() => count("needs_review")).toBe("3");
    await page.getByRole("button", { name: "All", exact: true }).click();
    await expect.poll(() => count("in_progress")).toBe("1");
    await row.waitFor();
  }, 60_000);

  it("edits the feedback of a reviewed session in a dialog; the session page shows it and its log", async () => {
    const { page } = rig;
    const claimed = rowIn("needs_review", rated);
    await claimed
      .getByRole("button", { name: `Rate partially accurate (${short("DiskPressure", rated)})` })
      .click();
    const done = rowIn("reviewed", rated);
    await done.locator('[data-rating="partially_accurate"]').waitFor();
    await done
      .getByRole("button", { name: `Edit feedback of ${short("DiskPressure", rated)}` })
      .click();
    const dialog = page.getByRole("dialog", { name: "Edit feedback" });
    await dialog.getByRole("button", { name: "Inaccurate" }).click();
    await dialog.getByLabel("Action taken").fill("Restarted the node");
    await dialog.getByLabel("Investigation feedback").fill("Missed the kubelet logs");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "hidden" });
    await done.locator('[data-rating="inaccurate"]').waitFor();

    await page.goto(rig.url(`/sessions/${rated}`));
    const panel = page.getByTestId("review-panel");
    await panel.getByText("Restarted the node").waitFor();
    await panel.getByText("Missed the kubelet logs").waitFor();
    const log = panel.getByRole("list", { name: "Review activity" }).getByRole("listitem");
    await expect
      .poll(() => log.allTextContents())
      .toEqual([
        expect.stringContaining("alice claimed → in review"),
        expect.stringContaining("alice completed as accurate → reviewed"),
        expect.stringContaining("alice reopened → needs review"),
        // Completing from needs review claims first (two activity rows).
        expect.stringContaining("alice claimed → in review"),
        expect.stringContaining("alice completed as partially accurate → reviewed"),
        expect.stringContaining("alice edited the feedback as inaccurate → reviewed"),
      ]);
  }, 60_000);

  it("the session page's review panel claims and reopens", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${acked}`));
    const panel = page.getByTestId("review-panel");
    await panel.getByRole("button", { name: "Claim" }).click();
    await expect.poll(() => panel.getAttribute("data-review-status")).toBe("in_progress");
    await expect.poll(() => panel.getByTestId("review-assignee").textContent()).toBe("alice");
    await panel.getByRole("button", { name: "Complete…" }).click();
    const dialog = page.getByRole("dialog", { name: "Complete review" });
    const complete = dialog.getByRole("button", { name: "Complete" });
    expect(await complete.isDisabled()).toBe(true);
    await dialog.getByRole("button", { name: "Accurate", exact: true }).click();
    await complete.click();
    await expect.poll(() => panel.getAttribute("data-review-status")).toBe("reviewed");
    await panel.getByRole("button", { name: "Reopen" }).click();
    await expect.poll(() => panel.getAttribute("data-review-status")).toBe("needs_review");
  }, 60_000);

  it("bulk-claims from the list; the session bob holds fails and is named", async () => {
    const { page } = rig;
    await page.goto(rig.url("/?review_status=needs_review,in_progress"));
    const row = (id: string) => page.locator(`tr[data-session-id="${id}"]`);
    await row(bulk).waitFor();
    await row(bobs).waitFor();
    await page.getByRole("checkbox", { name: "Needs review" }).waitFor();
    expect(await page.getByRole("checkbox", { name: "Needs review" }).isChecked()).toBe(true);
    await row(bulk).getByRole("checkbox").check();
    await row(bobs).getByRole("checkbox").check();
    const bar = page.getByRole("region", { name: "Bulk review" });
    await bar.getByText("2 selected").waitFor();
    await bar.getByRole("button", { name: "Claim" }).click();
    const outcome = page.getByTestId("bulk-outcome");
    await outcome.getByText("Claimed 1 of 2.").waitFor();
    const failed = outcome.locator(`li[data-session-id="${bobs}"]`);
    expect(await failed.textContent()).toContain(short("PodCrashLooping", bobs));
    await expect.poll(() => row(bulk).locator(".assignee").textContent()).toBe("alice");
    await expect.poll(() => row(bobs).locator(".assignee").textContent()).toBe("bob");
    await rig.shot("sessions-review");
    const detail = await rig.system.api<SessionDetail>(`/api/v1/sessions/${bobs}`, {
      headers: ALICE,
    });
    expect(detail.body.assignee).toBe("bob");
  }, 60_000);

  it("reaches the new controls by keyboard", async () => {
    const { page } = rig;
    await page.goto(rig.url("/triage"));
    await rowIn("needs_review", acked).waitFor();
    await page.getByRole("button", { name: "All", exact: true }).focus();
    const names: string[] = [];
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press("Tab");
      names.push(
        await page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          return el?.getAttribute("aria-label") ?? el?.textContent?.trim() ?? "";
        }),
      );
    }
    const who = short("HighLatency", acked);
    expect(names).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Needs review/),
        who,
        "Claim",
        `Ack ${who}`,
        `Rate accurate (${who})`,
        `Rate partially accurate (${who})`,
        `Rate inaccurate (${who})`,
      ]),
    );
  }, 60_000);

  it("has no serious accessibility violations, in both themes", async () => {
    const { page } = rig;
    const found: Record<string, unknown> = {};
    for (const theme of THEMES) {
      for (const path of ["/triage", `/sessions/${rated}`, "/"]) {
        await page.goto(rig.url(path));
        if (path === "/triage") await rowIn("needs_review", acked).waitFor();
        else if (path === "/") await page.locator(`tr[data-session-id="${rated}"]`).waitFor();
        else await page.getByTestId("review-panel").waitFor();
        await showTheme(page, theme);
        const violations = await seriousAxeViolations(page);
        if (violations.length) found[`${theme} ${path}`] = violations;
        if (path === "/triage") {
          await page.getByRole("button", { name: /^Reviewed/ }).click();
          await rowIn("reviewed", rated).waitFor();
          const more = await seriousAxeViolations(page);
          if (more.length) found[`${theme} ${path} reviewed`] = more;
          await page.mouse.move(700, 1200);
          await page.getByRole("tooltip").waitFor({ state: "hidden" });
          await rig.shot(theme === "light" ? "triage" : "triage-dark");
        }
      }
    }
    expect(found).toEqual({});
    await mkdir(README_SHOTS, { recursive: true });
    for (const name of ["triage.png", "triage-dark.png"]) {
      await copyFile(resolve(SCREENSHOTS, name), resolve(README_SHOTS, name));
    }
  }, 120_000);
});
