import type { SessionDetail, SystemConfigResponse, TimelineResponse } from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seriousAxeViolations, showTheme, THEMES } from "../../packages/dashboard/testing/axe.ts";
import { waitStatus } from "../e2e/scenario-support.ts";
import { type DashboardRig, markdownText, scanTimeline, startDashboardRig } from "./support.ts";

/**
 * The dashboard in Chromium against the whole system (every service a process, scripted LLM).
 * The tests run in order on one page: the investigation submitted in the first is the one the
 * trace, chat and search tests look at.
 */
const PROVIDER_SECRET = "xai-browser-secret-7c1e55d0";

describe("dashboard in a browser", () => {
  let rig: DashboardRig;
  let sessionId = "";
  const status = () => rig.page.getByTestId("connection-status");

  beforeAll(async () => {
    // A provider key in the environment: the config viewer names its variable, never its value.
    rig = await startDashboardRig({ env: { XAI_API_KEY: PROVIDER_SECRET } });
  }, 240_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  it("submits an alert from the form and streams the investigation live, across a reconnect, to the final analysis", async () => {
    const { page } = rig;
    await page.goto(rig.url("/submit"));
    await status().getByText("Live").waitFor();
    // This stack runs with authorization off (as `pnpm start` does): every page says so.
    await page
      .getByRole("status", { name: "Authorization off" })
      .getByText("everyone who can reach TARSy acts as the one local user")
      .waitFor();
    // Validation before sending: broken JSON is refused in the page.
    await page.getByLabel("Alert data").fill('{"pod": ');
    await page.getByRole("button", { name: "Submit alert" }).click();
    await page.getByText(/Not valid JSON/).waitFor();
    expect(new URL(page.url()).pathname).toBe("/submit");

    await page.getByLabel("Alert type").selectOption("PodCrashLooping");
    await page.getByLabel("Alert data").fill(
      JSON.stringify({
        alertname: "PodCrashLooping",
        namespace: "payments",
        pod: "payments-api-7f9c6d5b8-x2kqz",
        severity: "critical",
      }),
    );
    await page
      .getByLabel("Runbook URL")
      .fill("https://github.com/acme/runbooks/blob/main/payments.md");
    await rig.shot("submit");
    await page.getByRole("button", { name: "Submit alert" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/);
    sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2] ?? "");
    expect(sessionId).not.toBe("");

    // Tokens arrive one chunk at a time: a streaming response's text grows while we watch.
    const busyResponse = 'article[aria-busy="true"][data-event-type="llm_response"] .markdown';
    const streaming = page.locator(busyResponse).first();
    await streaming.waitFor({ timeout: 60_000 });
    const before = (await streaming.textContent()) ?? "";
    await page.waitForFunction(
      ([sel, n]) => {
        const el = document.querySelector(sel as string);
        return el === null || (el.textContent ?? "").length > (n as number);
      },
      [busyResponse, before.length],
    );

    // Drop the socket for 1.5 s mid-investigation: the events of that gap come by catch-up.
    await page.evaluate(() =>
      (
        window as unknown as { tarsyLive: { dropForTesting(ms: number): void } }
      ).tarsyLive.dropForTesting(1500),
    );
    await status().getByText("Reconnecting…").waitFor();
    await status().getByText("Live").waitFor({ timeout: 15_000 });

    await page.getByRole("heading", { name: "Final analysis" }).waitFor({ timeout: 90_000 });
    await page.getByRole("heading", { name: "Executive summary" }).waitFor({ timeout: 60_000 });
    await page.getByRole("heading", { level: 1 }).getByText("completed").waitFor();
    // Markdown is rendered, not shown as source.
    const finalAnalysis = page.getByRole("region", { name: "Final analysis" });
    await finalAnalysis.getByRole("heading", { name: "Root cause" }).waitFor();
    expect(await finalAnalysis.locator(".markdown").innerHTML()).toContain("<ol>");
    // Parallel agents, one tab each.
    const agents = page.getByRole("tablist", { name: "Parallel agents" });
    await agents.getByRole("tab", { name: /LogAgent/ }).waitFor();
    await agents.getByRole("tab", { name: /EventsAgent/ }).waitFor();

    // Every persisted event is on the page exactly once, finished, with its stored content.
    const timeline = (
      await rig.system.api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`)
    ).body;
    expect(timeline.events.length).toBeGreaterThan(8);
    const { entries, duplicates } = await scanTimeline(page);
    const shown = [...entries.values()];
    expect(duplicates).toEqual([]);
    expect(shown.map((e) => e.id).sort()).toEqual(timeline.events.map((e) => e.id).sort());
    expect(shown.filter((e) => e.busy === "true")).toEqual([]);
    for (const event of timeline.events.filter((e) => e.event_type === "llm_response")) {
      // Rendered as markdown: the text reads as the stored content without its markers.
      expect(markdownText(entries.get(event.id)?.markdown ?? "")).toBe(markdownText(event.content));
    }
    await page.getByRole("button", { name: "Alert data" }).click();
    // Pretty-printed JSON: one key per line, indented.
    const alertData = await page.getByRole("region", { name: "alert payload" }).textContent();
    expect(alertData).toContain('\n  "pod": "payments-api-7f9c6d5b8-x2kqz",\n');
    await rig.shot("session-detail");
  }, 240_000);

  it("opens the trace and an LLM interaction with the whole conversation as sent", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${sessionId}`));
    await page.getByRole("link", { name: "Trace" }).click();
    await page.getByRole("heading", { name: "Trace" }).waitFor();
    await page.getByRole("heading", { name: "triage" }).waitFor();
    await page
      .getByRole("button", { name: /^LLM iteration/ })
      .first()
      .click();
    await page.getByRole("heading", { name: /LLM interaction: iteration/ }).waitFor();
    const conversation = page.getByRole("list", { name: "Conversation" });
    const roles = await conversation.locator("> li > strong").allTextContents();
    expect(roles.slice(0, 2)).toEqual(["system", "user"]);
    await expect(conversation.textContent()).resolves.toContain("payments");
    await rig.shot("trace-llm");
    await page.getByRole("button", { name: /^MCP tool_call demo-cluster\.get_pods/ }).click();
    const getPods = page.getByRole("region", { name: "MCP tool_call: demo-cluster.get_pods" });
    await getPods.getByRole("heading", { name: "MCP tool_call: demo-cluster.get_pods" }).waitFor();
    await expect(getPods.textContent()).resolves.toContain("CrashLoopBackOff");
    await page
      .getByRole("button", { name: /^MCP tool_list demo-cluster/ })
      .first()
      .click();
    const toolList = page.getByRole("region", { name: "MCP tool_list: demo-cluster" });
    await toolList.getByRole("heading", { name: "MCP tool_list: demo-cluster" }).waitFor();
    await toolList.getByRole("button", { name: "Available tools" }).click();
    await expect(toolList.textContent()).resolves.toContain("get_pod_logs");
  }, 60_000);

  it("asks a chat question, shows the turn busy, then the streamed answer", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${sessionId}`));
    await page.getByLabel("Ask a follow-up question").fill("When did it first fail?");
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByRole("button", { name: "Answering…" }).waitFor();
    const chat = page.getByRole("region", { name: "Chat" });
    await chat.getByText("When did it first fail?").waitFor();
    await chat
      .getByText(
        "The first failure was payments-api-7f9c6d5b8-x2kqz at 03:12:04Z (OutOfMemoryError, exit 137).",
      )
      .waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 30_000 });
    await rig.shot("chat");
  }, 120_000);

  it("cancels a running session from its page", async () => {
    const { page } = rig;
    await page.goto(rig.url("/submit"));
    await page.getByLabel("Free text").check();
    await page.getByLabel("Alert data").fill("SLOW-CANCEL: payments-api pods stuck in Pending");
    await page.getByRole("button", { name: "Submit alert" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/);
    await page.locator('article[aria-busy="true"]').first().waitFor({ timeout: 60_000 });
    await page.goto(rig.url("/"));
    await page.getByRole("heading", { name: "Active (1)" }).waitFor({ timeout: 30_000 });
    await rig.shot("sessions-active");
    await page
      .getByRole("region", { name: /Active/ })
      .getByRole("link")
      .first()
      .click();
    await page.getByRole("button", { name: "Cancel session" }).click();
    await page
      .getByRole("heading", { level: 1 })
      .getByText("cancelled")
      .waitFor({ timeout: 60_000 });
    // What was streaming when the cancel came stops streaming (marked cancelled), not forever.
    await page.waitForFunction(
      () => document.querySelectorAll('article[aria-busy="true"]').length === 0,
      undefined,
      { timeout: 15_000 },
    );
    await page
      .getByRole("article")
      .filter({ has: page.getByText("cancelled", { exact: true }) })
      .first()
      .waitFor();
  }, 180_000);

  it("searches and filters the session list, and the URL survives a reload", async () => {
    const { page } = rig;
    await page.goto(rig.url("/"));
    const rows = page.locator("table.sessions tbody tr[data-session-id]");
    await rows.nth(1).waitFor();
    expect(await rows.count()).toBe(2);
    await page.getByLabel("Search").fill("x2kqz");
    await page.waitForURL(/search=x2kqz/);
    await page.waitForFunction(() => document.querySelectorAll("tr[data-session-id]").length === 1);
    expect(await rows.first().getAttribute("data-session-id")).toBe(sessionId);
    await page.reload();
    await expect(page.getByLabel("Search").inputValue()).resolves.toBe("x2kqz");
    await page.waitForFunction(() => document.querySelectorAll("tr[data-session-id]").length === 1);
    await rig.shot("sessions-search");
    await page.goto(rig.url("/?status=cancelled"));
    await page.waitForFunction(() => document.querySelectorAll("tr[data-session-id]").length === 1);
    expect(await rows.first().getAttribute("data-session-id")).not.toBe(sessionId);
    await expect(page.getByLabel("cancelled").isChecked()).resolves.toBe(true);
    await page.getByLabel("Search").fill("nothing-matches-this");
    await page.getByText("No sessions match.").waitFor();
  }, 60_000);

  it("shows MCP server health and tools, and reads in the dark theme", async () => {
    const { page } = rig;
    await page.goto(rig.url("/system"));
    const row = page
      .getByRole("table", { name: "MCP servers" })
      .getByRole("row", { name: /demo-cluster/ });
    await row.getByText(/^[1-9]\d* tools$/).waitFor({ timeout: 30_000 });
    await row.getByText(/healthy|unknown/).waitFor();
    // Each tool with its class: the demo cluster's tools only read (their annotations say so).
    await row.getByText(/^[1-9]\d* tools$/).click();
    const getPods = row.getByRole("listitem").filter({ hasText: "get_pods" });
    await getPods.getByText("read-only", { exact: true }).waitFor();
    await expect(getPods.getByTitle("from the server's annotations").count()).resolves.toBe(1);
    await expect(row.getByText("mutating", { exact: true }).count()).resolves.toBe(0);
    await rig.shot("system");
    await page.getByRole("button", { name: "Switch to dark theme" }).click();
    await expect(page.evaluate(() => document.documentElement.dataset.theme)).resolves.toBe("dark");
    await page.goto(rig.url(`/sessions/${sessionId}`));
    await page.getByRole("heading", { name: "Final analysis" }).waitFor();
    await rig.shot("session-dark");
  }, 60_000);
  it("keeps the chosen theme across a reload, and both themes render", async () => {
    const { page } = rig;
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    await page.goto(rig.url("/"));
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    if ((await theme()) !== "light") {
      await page.getByRole("button", { name: "Switch to light theme" }).click();
    }
    await expect(theme()).resolves.toBe("light");
    await expect(background()).resolves.toBe("rgb(247, 248, 250)");
    await page.getByRole("button", { name: "Switch to dark theme" }).click();
    await expect(theme()).resolves.toBe("dark");
    await expect(background()).resolves.toBe("rgb(18, 21, 26)");
    await page.reload();
    await page.getByRole("button", { name: "Switch to light theme" }).waitFor();
    await page.getByRole("heading", { name: "Active (0)" }).waitFor();
    await expect(theme()).resolves.toBe("dark");
    await expect(background()).resolves.toBe("rgb(18, 21, 26)");
    await rig.shot("sessions-dark");
    await page.getByRole("button", { name: "Switch to light theme" }).click();
    await page.reload();
    await page.getByRole("button", { name: "Switch to dark theme" }).waitFor();
    await expect(theme()).resolves.toBe("light");
    await expect(background()).resolves.toBe("rgb(247, 248, 250)");
  }, 60_000);

  it("opens a list URL with its filters shown in the controls and applied to the list", async () => {
    const { page } = rig;
    const rows = page.locator("table.sessions tbody tr[data-session-id]");
    await page.goto(rig.url("/?status=completed&alert_type=PodCrashLooping&range=24h"));
    await page.waitForFunction(() => document.querySelectorAll("tr[data-session-id]").length === 1);
    expect(await rows.first().getAttribute("data-session-id")).toBe(sessionId);
    await expect(page.getByLabel("completed").isChecked()).resolves.toBe(true);
    await expect(page.getByLabel("cancelled").isChecked()).resolves.toBe(false);
    await expect(page.getByLabel("Alert type").inputValue()).resolves.toBe("PodCrashLooping");
    await expect(
      page.getByRole("button", { name: "Last 24h" }).getAttribute("aria-pressed"),
    ).resolves.toBe("true");
    // The row's summary: the final analysis' first lines, on focus as on hover.
    await rows.first().getByRole("link").focus();
    await page
      .getByRole("tooltip")
      .getByText(/Root cause/)
      .waitFor();
  }, 60_000);

  it("filters by a time-range preset and by a custom range", async () => {
    const { page } = rig;
    await page.goto(rig.url("/"));
    await page.waitForFunction(() => document.querySelectorAll("tr[data-session-id]").length === 2);
    // A preset asks the API for what was created since that long ago.
    const asked = page.waitForRequest(
      (r) => r.url().includes("/api/v1/sessions?") && new URL(r.url()).searchParams.has("from"),
    );
    const clicked = Date.now();
    await page.getByRole("button", { name: "Last 1h" }).click();
    await page.waitForURL(/range=1h/);
    const from = Date.parse(new URL((await asked).url()).searchParams.get("from") ?? "");
    expect(Math.abs(clicked - 3_600_000 - from)).toBeLessThan(30_000);
    await page.waitForFunction(() => document.querySelectorAll("tr[data-session-id]").length === 2);
    // A custom range after every session matches none; the URL keeps it.
    await page.getByRole("button", { name: "Custom" }).click();
    await page.getByLabel("From").fill("2099-01-01T00:00");
    await page.waitForURL(/from=2099-01-01T00%3A00/);
    await page.getByText("No sessions match.").waitFor();
    await page.reload();
    await expect(page.getByLabel("From").inputValue()).resolves.toBe("2099-01-01T00:00");
    await page.getByText("No sessions match.").waitFor();
  }, 60_000);

  it("shows the resolved configuration: chains, agents and providers, no secret", async () => {
    const { page } = rig;
    await page.goto(rig.url("/system"));
    const chains = page.getByRole("table", { name: "Chains" });
    const crashChain = chains.getByRole("row", { name: /PodCrashLooping/ }).first();
    await crashChain.waitFor();
    // Under the chain's provider: the models of its executive summary and amended report, as
    // the API resolves them (ADR-0025's compose knobs).
    const { body: config } = await rig.system.api<SystemConfigResponse>("/api/v1/system/config");
    const chain = config.chains.find((c) => c.alert_types.includes("PodCrashLooping"));
    expect(chain).toBeDefined();
    const model = (m: { llm_provider: string; llm_backend: string }) =>
      `${m.llm_provider} (${m.llm_backend})`;
    if (chain) {
      await crashChain.getByText(`executive summary: ${model(chain.executive_summary)}`).waitFor();
      await crashChain.getByText(`amended report: ${model(chain.compose)}`).waitFor();
    }
    const providers = page.getByRole("table", { name: "LLM providers" });
    await providers.getByRole("row", { name: /scripted-demo/ }).waitFor();
    await providers.getByRole("row", { name: /XAI_API_KEY/ }).waitFor();
    await page.getByRole("table", { name: "Agents" }).getByRole("row").nth(1).waitFor();
    expect(await page.locator("body").textContent()).not.toContain(PROVIDER_SECRET);
    await rig.shot("system-config");
  }, 60_000);

  it("shows the signed-in user when oauth2-proxy answers, and no menu when it does not", async () => {
    const { page } = rig;
    // The rig has no oauth2-proxy: /oauth2/userinfo is the SPA's index.html, not JSON.
    await page.goto(rig.url("/"));
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await page.getByTestId("server-version").waitFor();
    expect(await page.getByRole("button", { name: "jdoe" }).count()).toBe(0);
    // A real request from the page, answered by Playwright's interception as the proxy would.
    await page.route("**/oauth2/userinfo", (route) =>
      route.fulfill({ json: { user: "jdoe", email: "jdoe@example.com" } }),
    );
    await page.reload();
    await page.getByRole("button", { name: "jdoe" }).click();
    await page.getByRole("menu").getByText("jdoe@example.com").waitFor();
    await page.getByRole("menuitem", { name: "Sign out" }).waitFor();
    await page.keyboard.press("Escape");
    await page.unroute("**/oauth2/userinfo");
  }, 60_000);

  it("carries the signed-in user on what they do: the alert they submit and the question they ask", async () => {
    // oauth2-proxy in front of the dashboard adds the user to every request it passes on.
    const context = await rig.browser.newContext({
      viewport: { width: 1400, height: 900 },
      extraHTTPHeaders: { "X-Forwarded-User": "alice", "X-Forwarded-Email": "alice@example.com" },
    });
    try {
      const page = await context.newPage();
      await page.goto(rig.url(`/submit?ws=${encodeURIComponent(rig.system.stack.wsUrl)}`));
      await page.getByLabel("Alert type").selectOption("PodCrashLooping");
      await page.getByLabel("Alert data").fill(JSON.stringify({ note: "submitted by alice" }));
      await page.getByRole("button", { name: "Submit alert" }).click();
      await page.waitForURL(/\/sessions\/[^/]+$/);
      const id = decodeURIComponent(new URL(page.url()).pathname.split("/")[2] ?? "");
      const submitter = page.locator("dt", { hasText: "Submitted by" }).locator("+ dd");
      await expect.poll(() => submitter.textContent(), { timeout: 30_000 }).toBe("alice");
      await waitStatus(rig.system, id, ["completed"], 120_000);
      await page.getByLabel("Ask a follow-up question").fill("Who is asking?");
      await page.getByRole("button", { name: "Send" }).click();
      const chat = page.getByRole("region", { name: "Chat" });
      await chat.getByText("alice:").waitFor({ timeout: 60_000 });
      const detail = (await rig.system.api<SessionDetail>(`/api/v1/sessions/${id}`)).body;
      expect(detail.author).toBe("alice");
      await expect
        .poll(
          async () =>
            (await rig.system.api<SessionDetail>(`/api/v1/sessions/${id}`)).body.chat?.messages.map(
              (m) => [m.author, m.content],
            ),
          { timeout: 30_000 },
        )
        .toEqual([["alice", "Who is asking?"]]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("shows the server's version, and offers a reload once a newer build is served", async () => {
    const context = await rig.browser.newContext();
    try {
      const page = await context.newPage();
      await page.clock.install();
      await page.goto(rig.url("/system"));
      const health = (await rig.system.api<{ version: string }>("/health")).body;
      await page.getByTestId("server-version").getByText(`v${health.version}`).waitFor();
      const banner = page.getByText("A newer version of TARSy is available — reload");
      // The same build as the page's: a poll finds nothing new.
      const polled = page.waitForResponse((r) => r.url().endsWith("/version.json"));
      await page.clock.fastForward(61_000);
      expect((await polled).status()).toBe(200);
      expect(await banner.count()).toBe(0);
      // A deployment: the server now serves another build.
      await page.route("**/version.json", (route) =>
        route.fulfill({ json: { build: "a-newer-build" } }),
      );
      await page.clock.fastForward(61_000);
      await banner.waitFor();
      await page.getByRole("button", { name: "Reload" }).waitFor();
    } finally {
      await context.close();
    }
  }, 60_000);
  it("has no serious accessibility violations on the list, submit and system pages, in both themes", async () => {
    const { page } = rig;
    const pages = [
      { path: "/", ready: page.getByRole("heading", { name: "Active (0)" }) },
      { path: "/submit", ready: page.getByRole("heading", { name: "Submit an alert" }) },
      { path: "/system", ready: page.getByRole("table", { name: "LLM providers" }) },
    ];
    const found: Record<string, unknown> = {};
    for (const theme of THEMES) {
      for (const { path, ready } of pages) {
        await page.goto(rig.url(path));
        await ready.waitFor();
        await showTheme(page, theme);
        const violations = await seriousAxeViolations(page);
        if (violations.length) found[`${theme} ${path}`] = violations;
      }
    }
    expect(found).toEqual({});
  }, 90_000);
});
