import { resolve } from "node:path";
import type { AlertSubmitResponse, SessionDetail } from "@tarsy/contracts";
import { createDb, createMemories } from "@tarsy/db";
import { until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "../../packages/dashboard/testing/browser.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const CONFIG = resolve(ROOT, "test/browser/fixtures/authorization");

/** oauth2-proxy's identity headers, as the proxy (on loopback, a trusted address) sends them. */
const as = (user: string, group: string) => ({
  "X-Forwarded-User": user,
  "X-Forwarded-Groups": group,
});
/** create/update/cancel in payments, only get in platform (the default project). */
const SRE = as("sre-alice", "sre");
/** get in both projects. */
const VIEWER = as("viewer-bob", "viewers");
/** Everything everywhere: only the test's own API calls, to seed sessions. */
const ADMIN = as("root-admin", "admins");

/**
 * The dashboard with authorization on (one stack): who the caller is comes from the proxy's
 * headers, each browser context sends its user's. The page offers only what `/auth/me` says
 * the caller may do in each session's project; the API enforces it either way.
 */

/** The list's Project column (0-based), found by its header: the columns before it vary. */
async function projectColumn(page: Page): Promise<number> {
  const heads = (await page.locator("thead tr").first().locator("th").allTextContents()).map((t) =>
    t.trim(),
  );
  const index = heads.indexOf("Project");
  if (index < 0) throw new Error(`no Project column in ${JSON.stringify(heads)}`);
  return index;
}

describe("authorization in the dashboard", () => {
  let rig: DashboardRig;
  let viewer: Page;
  /** Seeded by the admin: in progress for minutes, in platform (where the SRE may only look). */
  let heldInPlatform = "";
  /** Seeded by the admin: completed, with chat, in payments. */
  let doneInPayments = "";
  /** Submitted by the SRE from the form. */
  let submitted = "";

  const submitAsAdmin = async (project: string, note: string) => {
    const res = await rig.system.api<AlertSubmitResponse>("/api/v1/alerts", {
      method: "POST",
      headers: ADMIN,
      body: JSON.stringify({ alert_type: "Quick", project, data: { pod: "payments-api", note } }),
    });
    expect(res.status).toBe(202);
    return res.body.session_id;
  };
  const statusOf = async (id: string) =>
    (await rig.system.api<SessionDetail>(`/api/v1/sessions/${id}`, { headers: ADMIN })).body.status;
  /** The caller's `/auth/me` has answered: the app bar names them. */
  const signedIn = (page: Page, user: string) =>
    page.getByTestId("signed-in-user").getByText(user, { exact: true }).waitFor();
  const row = (page: Page, id: string) => page.locator(`tr[data-session-id="${id}"]`);

  beforeAll(async () => {
    rig = await startDashboardRig({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      headers: SRE,
    });
    heldInPlatform = await submitAsAdmin("platform", "HOLD");
    doneInPayments = await submitAsAdmin("payments", "quick");
    await until(async () => (await statusOf(doneInPayments)) === "completed", {
      what: "the seeded payments session to complete",
      timeoutMs: 60_000,
    });
    viewer = await rig.pageAs(VIEWER);
  }, 240_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  it("shows who is signed in, no authorization-off banner, and a live socket for each user", async () => {
    for (const [page, user] of [
      [rig.page, "sre-alice"],
      [viewer, "viewer-bob"],
    ] as const) {
      await page.goto(rig.url("/"));
      await signedIn(page, user);
      expect(await page.getByRole("status", { name: "Authorization off" }).count()).toBe(0);
      // The relay refuses an upgrade without an identity: Live means the headers reached it.
      await page.getByTestId("connection-status").getByText("Live").waitFor({ timeout: 15_000 });
    }
    // Without the headers nobody is identified: /auth/me and the socket are refused.
    const nobody = await rig.pageAs({});
    await nobody
      .getByRole("alert", { name: "Permissions unknown" })
      .getByText("this route needs an identified caller")
      .waitFor();
    await nobody.getByTestId("connection-status").getByText("Reconnecting…").waitFor();
    expect(await nobody.getByTestId("signed-in-user").count()).toBe(0);
    await nobody.context().close();
  });

  it("offers the SRE only the projects they may create in, and the session lands in the chosen one", async () => {
    const { page } = rig;
    await page.goto(rig.url("/submit"));
    await signedIn(page, "sre-alice");
    const project = page.getByLabel("Project", { exact: true });
    // The page's chunk may load after the app bar: its field shows once /auth/me is in.
    await project.waitFor();
    // platform is the default project, but the SRE may only look there: payments is chosen.
    expect(await project.locator("option").allTextContents()).toEqual(["payments"]);
    expect(await project.inputValue()).toBe("payments");
    await page.getByLabel("Alert data").fill(JSON.stringify({ pod: "checkout", note: "HOLD" }));
    await page.getByRole("button", { name: "Submit alert" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/);
    submitted = decodeURIComponent(new URL(page.url()).pathname.split("/")[2] ?? "");
    expect(submitted).not.toBe("");

    await page.goto(rig.url("/"));
    const cells = row(page, submitted).locator("td");
    await cells.first().waitFor();
    const projectAt = await projectColumn(page);
    expect(await cells.nth(projectAt).textContent()).toBe("payments");
    expect(await row(page, heldInPlatform).locator("td").nth(projectAt).textContent()).toBe(
      "platform",
    );
  }, 60_000);

  it("narrows the list to one project with the project filter, kept in the URL", async () => {
    const { page } = rig;
    await page.goto(rig.url("/"));
    await signedIn(page, "sre-alice");
    const filter = page.getByLabel("Project", { exact: true });
    await filter.waitFor();
    expect(await filter.locator("option").allTextContents()).toEqual([
      "All",
      "payments",
      "platform",
    ]);
    await row(page, submitted).waitFor();
    await filter.selectOption("platform");
    await page.waitForURL(/[?&]project=platform(&|$)/);
    await row(page, submitted).waitFor({ state: "detached" });
    const column = (await projectColumn(page)) + 1;
    const projects = await page
      .locator(`tr[data-session-id] td:nth-child(${column})`)
      .allTextContents();
    expect(projects).toEqual(["platform"]);
    expect(await row(page, heldInPlatform).count()).toBe(1);

    // The link survives a reload: the same filter, the same rows.
    await page.reload();
    await row(page, heldInPlatform).waitFor();
    expect(await page.getByLabel("Project", { exact: true }).inputValue()).toBe("platform");
    expect(await row(page, doneInPayments).count()).toBe(0);
  }, 60_000);

  it("shows the SRE cancel in payments but not in platform, and the cancel goes through", async () => {
    const { page } = rig;
    // platform: the session runs, the SRE may look but not cancel.
    expect(await statusOf(heldInPlatform)).not.toMatch(/completed|failed|cancelled|timed_out/);
    await page.goto(rig.url(`/sessions/${heldInPlatform}`));
    await signedIn(page, "sre-alice");
    await page.getByRole("link", { name: "Trace" }).waitFor();
    const facts = page.getByLabel("Session facts");
    await facts.getByText("platform", { exact: true }).waitFor();
    expect(await page.getByRole("button", { name: "Cancel session" }).count()).toBe(0);

    // payments: the SRE's own running session has the button, and it works.
    await page.goto(rig.url(`/sessions/${submitted}`));
    await page.getByLabel("Session facts").getByText("payments").waitFor();
    await page.getByRole("button", { name: "Cancel session" }).click();
    await page.getByRole("heading", { level: 1 }).getByText("cancelled").waitFor({
      timeout: 30_000,
    });
  }, 60_000);

  /** The score and review actions of the session page (whatever the session's state). */
  const scoreButton = (page: Page) =>
    page.getByTestId("score-card").getByRole("button", { name: /^(Score now|Re-score)$/ });
  const reviewButtons = (page: Page) =>
    page.getByTestId("review-panel").getByRole("button", {
      name: /^(Claim|Acknowledge|Unclaim|Complete…|Reopen|Edit feedback)$/,
    });

  it("gives the SRE the chat input, score and review on a payments session, but no delete", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${doneInPayments}`));
    await signedIn(page, "sre-alice");
    await page.getByLabel("Ask a follow-up question").waitFor();
    await scoreButton(page).waitFor();
    await reviewButtons(page).first().waitFor();
    // update, not delete: the SRE's role has no delete line.
    expect(await page.getByRole("button", { name: "Delete session" }).count()).toBe(0);
  });

  it("gives an admin the delete button on a finished session", async () => {
    const admin = await rig.pageAs(ADMIN);
    try {
      await admin.goto(rig.url(`/sessions/${doneInPayments}`));
      await signedIn(admin, "root-admin");
      await admin.getByRole("button", { name: "Delete session" }).waitFor();
    } finally {
      await admin.context().close();
    }
  });

  it("shows the viewer no Submit, no cancel, no chat input, no score, review or delete, and no configuration", async () => {
    const page = viewer;
    await page.goto(rig.url("/"));
    await signedIn(page, "viewer-bob");
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Sessions" }).waitFor();
    expect(await nav.getByRole("link", { name: "Submit alert" }).count()).toBe(0);
    // Sessions of both projects are listed.
    await row(page, heldInPlatform).waitFor();
    await row(page, doneInPayments).waitFor();

    // The submit page, opened by its URL, says why there is no form.
    await page.goto(rig.url("/submit"));
    await page.getByText("may not submit alerts in any project").waitFor();
    expect(await page.getByLabel("Alert data").count()).toBe(0);

    await page.goto(rig.url(`/sessions/${heldInPlatform}`));
    await signedIn(page, "viewer-bob");
    await page.getByLabel("Session facts").getByText("platform").waitFor();
    expect(await statusOf(heldInPlatform)).not.toMatch(/completed|failed|cancelled|timed_out/);
    expect(await page.getByRole("button", { name: "Cancel session" }).count()).toBe(0);

    // A finished session with chat: the chat is there to read, the question field is not.
    await page.goto(rig.url(`/sessions/${doneInPayments}`));
    await signedIn(page, "viewer-bob");
    const chat = page.getByRole("region", { name: "Chat" });
    await chat.getByText("You may read this chat").waitFor();
    expect(await page.getByLabel("Ask a follow-up question").count()).toBe(0);
    // The score and review cards are shown to read, without their actions; no delete either.
    await page.getByTestId("score-card").waitFor();
    await page.getByTestId("review-panel").waitFor();
    expect(await scoreButton(page).count()).toBe(0);
    expect(await reviewButtons(page).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Delete session" }).count()).toBe(0);

    // System: the MCP servers are shown, the configuration (admins only) is not.
    await page.goto(rig.url("/system"));
    await signedIn(page, "viewer-bob");
    await page.getByRole("table", { name: "MCP servers" }).waitFor();
    expect(await page.getByRole("heading", { name: "Configuration" }).count()).toBe(0);
  }, 60_000);

  it("offers memory actions only where /auth/me grants them: the SRE deprecates in payments, the viewer only reads", async () => {
    const db = createDb({ url: rig.system.database.url });
    const seed = async (project: string, content: string) => {
      const [m] = await createMemories(
        db.prisma,
        { project, sourceSessionId: null, alertType: null, chainId: null },
        [
          {
            content,
            category: "procedural",
            valence: "positive",
            confidence: 0.9,
            embedding: [],
            embeddingModel: null,
          },
        ],
      );
      return m?.id ?? "";
    };
    let inPayments = "";
    let inPlatform = "";
    try {
      inPayments = await seed("payments", "Restart checkout only after draining the queue");
      inPlatform = await seed("platform", "The ingress controller drops idle connections");
    } finally {
      await db.close();
    }
    const memoryRow = (page: Page, id: string) => page.locator(`tr[data-memory-id="${id}"]`);
    const buttons = (page: Page, id: string) =>
      memoryRow(page, id).getByRole("button").allTextContents();

    const sre = rig.page;
    await sre.goto(rig.url("/"));
    await signedIn(sre, "sre-alice");
    await sre
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Memories" })
      .click();
    // The rows render once /auth/me has answered (signed in): what they offer is final.
    await memoryRow(sre, inPayments).waitFor();
    await memoryRow(sre, inPlatform).waitFor();
    // update but not delete in payments; only get in platform.
    expect(await buttons(sre, inPayments)).toEqual(["Deprecate"]);
    expect(await buttons(sre, inPlatform)).toEqual([]);
    await memoryRow(sre, inPayments).getByRole("button", { name: "Deprecate" }).click();
    await memoryRow(sre, inPayments).getByRole("button", { name: "Undeprecate" }).waitFor();

    await viewer.goto(rig.url("/"));
    await signedIn(viewer, "viewer-bob");
    await viewer
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Memories" })
      .click();
    await memoryRow(viewer, inPayments).waitFor();
    await memoryRow(viewer, inPlatform).waitFor();
    expect(await buttons(viewer, inPayments)).toEqual([]);
    expect(await buttons(viewer, inPlatform)).toEqual([]);
  }, 60_000);
});
