import type { TimelineResponse } from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FocusStop,
  focusStop,
  isFocused,
  marked,
  pressKey,
  tabThrough,
  tabTo,
} from "../../packages/dashboard/testing/keyboard.ts";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { DEMO_ALERT } from "../e2e/support.ts";
import { type DashboardRig, inViewport, startDashboardRig } from "./support.ts";

/**
 * The dashboard with a keyboard only: Tab, Shift+Tab, Enter, Space, arrows and Escape, from the
 * top of a freshly loaded page (no clicks, no focusing by script). Every stop must show a visible
 * focus ring, and Tab must get out of every widget to the end of each page. The tests run in order
 * on one page, over a finished demo investigation (triage, two parallel agents, synthesis).
 */
describe("the dashboard by keyboard", () => {
  let rig: DashboardRig;
  let sessionId = "";
  let timeline: TimelineResponse;
  const readClipboard = () => rig.page.evaluate(() => navigator.clipboard.readText());
  const here = () => rig.page.locator(":focus");
  const path = () => {
    const u = new URL(rig.page.url());
    return `${u.pathname}${u.search}${u.hash}`;
  };
  /** A fresh load with nothing focused (Chromium turns a visit to the URL shown into a reload). */
  const open = async (to: string) => {
    await rig.page.goto("about:blank");
    await rig.page.goto(rig.url(to));
  };
  /** Fails, naming what has focus instead, unless the target has it. */
  const expectFocus = async (target: Parameters<typeof isFocused>[0]) => {
    if (!(await isFocused(target))) expect((await focusStop(rig.page)).what).toBe(`${target}`);
  };
  /** The stops that do not show focus as they should. */
  const unmarked = (trail: FocusStop[]) => trail.filter((s) => !marked(s)).map((s) => s.what);
  /** Presses a key; the stop it leads to must show focus. */
  const press = async (key: string) => {
    const stop = await pressKey(rig.page, key);
    expect(unmarked([stop])).toEqual([]);
    return stop;
  };
  /** Tabs to the target; every stop on the way must show focus. */
  const to = async (target: Parameters<typeof tabTo>[1], options?: Parameters<typeof tabTo>[2]) => {
    const trail = await tabTo(rig.page, target, options);
    expect(unmarked(trail)).toEqual([]);
    return trail;
  };

  beforeAll(async () => {
    rig = await startDashboardRig();
    await rig.page
      .context()
      .grantPermissions(["clipboard-read", "clipboard-write"], { origin: rig.url("") });
    sessionId = await submitAlert(rig.system, DEMO_ALERT.alert_type, DEMO_ALERT.data);
    await waitStatus(rig.system, sessionId, ["completed"], 120_000);
    timeline = (await rig.system.api<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`))
      .body;
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
  }, 60_000);

  it("skips to the content, and reaches the app bar's pages, theme switch and user menu", async () => {
    const { page } = rig;
    // A signed-in user, as oauth2-proxy would answer (the rig has none).
    await page.route("**/oauth2/userinfo", (route) =>
      route.fulfill({ json: { user: "jdoe", email: "jdoe@example.com" } }),
    );
    try {
      await open("/");
      await page.getByRole("heading", { name: "Active (0)" }).waitFor();
      // The first stop: the skip link, shown on screen; it moves focus into the page's content.
      await press("Tab");
      await expectFocus(page.getByRole("link", { name: "Skip to content" }));
      await press("Enter");
      await expectFocus(page.getByRole("main"));
      await press("Tab");
      await expectFocus(page.getByRole("searchbox", { name: "Search" }));

      // The pages, in the app bar.
      await open("/");
      await page.getByRole("heading", { name: "Active (0)" }).waitFor();
      const nav = page.getByRole("navigation", { name: "Main" });
      await to(nav.getByRole("link", { name: "Sessions" }));
      expect(await here().getAttribute("aria-current")).toBe("page");
      await press("Tab");
      await expectFocus(nav.getByRole("link", { name: "Triage" }));
      await press("Enter");
      await page.getByRole("heading", { name: "Triage", level: 1 }).waitFor();
      expect(path()).toBe("/triage");
      await press("Tab");
      await expectFocus(nav.getByRole("link", { name: "Approvals" }));
      await press("Enter");
      await page.getByRole("heading", { name: "Approvals", level: 1 }).waitFor();
      expect(path()).toBe("/actions");
      await press("Tab");
      await expectFocus(nav.getByRole("link", { name: "Submit alert" }));
      await press("Enter");
      await page.getByRole("heading", { name: "Submit an alert" }).waitFor();
      expect(path()).toBe("/submit");
      await press("Tab");
      await expectFocus(nav.getByRole("link", { name: "Usage" }));
      await press("Enter");
      await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
      expect(path()).toBe("/usage");
      await press("Tab");
      await expectFocus(nav.getByRole("link", { name: "Memories" }));
      await press("Enter");
      await page.getByRole("heading", { name: "Memories", level: 1 }).waitFor();
      expect(path()).toBe("/memories");
      await press("Tab");
      await expectFocus(nav.getByRole("link", { name: "System" }));
      await press("Enter");
      await page.getByRole("heading", { name: "System", level: 1 }).waitFor();
      expect(path()).toBe("/system");
      await to(nav.getByRole("link", { name: "Sessions" }), { back: true });
      await press("Enter");
      await page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
      expect(path()).toBe("/");

      // The theme switch, twice: the theme changes, focus stays on the switch.
      const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
      await to(page.getByRole("button", { name: /^Switch to (dark|light) theme$/ }));
      const before = await theme();
      const other = before === "dark" ? "light" : "dark";
      await press("Enter");
      await expect.poll(theme).toBe(other);
      await expectFocus(page.getByRole("button", { name: `Switch to ${before} theme` }));
      await press("Space");
      await expect.poll(theme).toBe(before);

      // The user menu: Enter opens it on its first item, Escape shuts it and focus comes back.
      // While the menu is open the page behind it is hidden from assistive technology.
      const user = page.getByRole("button", { name: "jdoe", includeHidden: true });
      await to(user);
      expect(await user.getAttribute("aria-haspopup")).toBe("menu");
      await press("Enter");
      const menu = page.getByRole("menu");
      await menu.getByText("jdoe@example.com").waitFor();
      expect(await user.getAttribute("aria-expanded")).toBe("true");
      await expectFocus(page.getByRole("menuitem", { name: "Sign out" }));
      await press("Escape");
      await menu.waitFor({ state: "detached" });
      await expectFocus(user);
      // Tab out of the open menu shuts it too: no trap.
      await press("Enter");
      await menu.waitFor();
      await press("Tab");
      await menu.waitFor({ state: "detached" });
      await expectFocus(user);
    } finally {
      await page.unroute("**/oauth2/userinfo");
    }
  }, 90_000);

  it("filters, sorts and opens a session on the list", async () => {
    const { page } = rig;
    await open("/");
    const rows = page.locator("table.sessions tbody tr[data-session-id]");
    await rows.first().waitFor();
    // A filter: the alert type, picked with the arrow keys in its select.
    const filters = page.getByRole("form", { name: "Filter sessions" });
    await to(filters.getByRole("combobox", { name: "Alert type" }));
    await press("ArrowDown");
    await page.waitForURL(/alert_type=PodCrashLooping/);
    // The control follows the URL once the page has re-rendered.
    await expect.poll(() => here().inputValue()).toBe("PodCrashLooping");
    // The time-range presets: one stop for the group, arrows move along it, Enter picks.
    const ranges = filters.getByRole("group", { name: "Time range" });
    await to(ranges.getByRole("button", { name: "All time" }));
    await press("ArrowRight");
    await expectFocus(ranges.getByRole("button", { name: "Last 1h" }));
    await press("Enter");
    await page.waitForURL(/range=1h/);
    await expect
      .poll(() => ranges.getByRole("button", { name: "Last 1h" }).getAttribute("aria-pressed"))
      .toBe("true");
    // A status, ticked with Space.
    await to(filters.getByRole("checkbox", { name: "completed" }));
    await press("Space");
    await page.waitForURL(/status=completed/);
    await expect.poll(() => here().isChecked()).toBe(true);
    // A column sorted from its header.
    const table = page.getByRole("table", { name: "Sessions" });
    await to(table.getByRole("button", { name: "Alert type" }));
    await press("Enter");
    await page.waitForURL(/sort_by=alert_type/);
    await expect
      .poll(() => table.getByRole("columnheader", { name: "Alert type" }).getAttribute("aria-sort"))
      .toMatch(/^(ascending|descending)$/);
    await expectFocus(table.getByRole("button", { name: "Alert type" }));
    // The session's row: focus shows its summary, Escape hides it, Enter opens the session.
    await rows.first().waitFor();
    expect(await rows.first().getAttribute("data-session-id")).toBe(sessionId);
    await to(rows.first().getByRole("link"));
    const summary = page.getByRole("tooltip");
    await summary.getByText(/Root cause/).waitFor();
    await press("Escape");
    await summary.waitFor({ state: "hidden" });
    await press("Enter");
    await page.waitForURL(new RegExp(`/sessions/${sessionId}$`));
    await page.getByRole("heading", { name: "Final analysis" }).waitFor();
  }, 90_000);

  it("works the session page: alert data, stepper, thinking, a tool call, copy, agent tabs", async () => {
    const { page } = rig;
    await open(`/sessions/${sessionId}`);
    await page.getByRole("heading", { name: "Final analysis" }).waitFor();
    await press("Tab");
    await press("Enter");
    await expectFocus(page.getByRole("main"));

    // The alert data: opened with Enter, its copy button, its scrollable text, shut with Space.
    const alertData = page.getByRole("button", { name: "Alert data" });
    await to(alertData);
    expect(await alertData.getAttribute("aria-expanded")).toBe("false");
    await press("Enter");
    const payload = page.getByRole("region", { name: "alert payload" });
    await payload.waitFor();
    expect(await alertData.getAttribute("aria-expanded")).toBe("true");
    await press("Tab");
    await expectFocus(page.getByRole("button", { name: "Copy alert payload" }));
    await press("Enter");
    await expect.poll(readClipboard).toBe(await payload.textContent());
    await press("Tab");
    await expectFocus(payload);
    await to(alertData, { back: true });
    await press("Space");
    await payload.waitFor({ state: "detached" });
    expect(await alertData.getAttribute("aria-expanded")).toBe("false");

    const timelineList = page.getByRole("list", { name: "Timeline events" });
    // The stepper is read, not operated: it is on screen as focus moves on into the timeline.
    const stepper = page.getByRole("list", { name: "Stages" });
    await press("Tab");
    expect(await timelineList.filter({ has: here() }).count()).toBe(1);
    expect(await inViewport(page, "ol[aria-label='Stages']")).toBe(true);
    expect(await stepper.getByRole("listitem").count()).toBeGreaterThanOrEqual(3);

    // A thinking block: Enter opens it, Space shuts it.
    const thought = "The alert names a crash-looping pod in payments.";
    await to(page.getByRole("button", { name: /^Thinking/ }));
    expect(await here().getAttribute("aria-expanded")).toBe("false");
    await press("Enter");
    await page.getByText(thought).waitFor();
    expect(await here().getAttribute("aria-expanded")).toBe("true");
    await press("Space");
    await page.getByText(thought).waitFor({ state: "detached" });
    expect(await here().getAttribute("aria-expanded")).toBe("false");

    // A tool call: opened with Space, its result copied with Enter, shut with Enter.
    const getPods = timeline.events.find(
      (e) =>
        e.event_type === "llm_tool_call" &&
        (e.metadata as { tool_name?: string }).tool_name === "get_pods",
    );
    expect(getPods?.content).toContain("CrashLoopBackOff");
    const toggle = page.getByRole("button", { name: "Tool call demo-cluster.get_pods" });
    const result = page.getByRole("region", { name: "result of demo-cluster.get_pods" });
    await to(toggle);
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    await press("Space");
    await result
      .getByText(/CrashLoopBackOff/)
      .first()
      .waitFor();
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    await to(page.getByRole("button", { name: "Copy result of demo-cluster.get_pods" }));
    await press("Enter");
    await expect.poll(readClipboard).toBe(getPods?.content);
    await to(toggle, { back: true });
    await press("Enter");
    await result.waitFor({ state: "detached" });
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");

    // The parallel agents: one stop for the tabs, the arrows move between them, Enter/Space pick.
    const agents = page.getByRole("tablist", { name: "Parallel agents" });
    const logTab = agents.getByRole("tab", { name: /LogAgent/ });
    const eventsTab = agents.getByRole("tab", { name: /EventsAgent/ });
    await to(logTab);
    expect(await logTab.getAttribute("aria-selected")).toBe("true");
    await press("ArrowRight");
    await expectFocus(eventsTab);
    await press("Enter");
    await page.getByText("Events: the kernel OOM-killed").waitFor();
    expect(await eventsTab.getAttribute("aria-selected")).toBe("true");
    // The selected agent's items follow the tabs.
    await press("Tab");
    expect(await timelineList.filter({ has: here() }).count()).toBe(1);
    await to(eventsTab, { back: true });
    await press("ArrowLeft");
    await expectFocus(logTab);
    await press("Space");
    await page.getByText("Logs: heap climbs to 1890Mi").waitFor();
    expect(await logTab.getAttribute("aria-selected")).toBe("true");
  }, 90_000);

  it("asks a chat question from the keyboard, by the Send button and by Ctrl+Enter", async () => {
    const { page } = rig;
    await open(`/sessions/${sessionId}`);
    await page.getByRole("heading", { name: "Final analysis" }).waitFor();
    const chat = page.getByRole("region", { name: "Chat" });
    const field = page.getByRole("textbox", { name: "Ask a follow-up question" });
    await to(field);
    await page.keyboard.type("When did it first fail?");
    await press("Tab");
    await expectFocus(page.getByRole("button", { name: "Send" }));
    await press("Enter");
    await chat
      .getByText(
        "The first failure was payments-api-7f9c6d5b8-x2kqz at 03:12:04Z (OutOfMemoryError, exit 137).",
      )
      .waitFor({ timeout: 60_000 });
    // Send is disabled while the turn is answered: focus went back to the question field.
    await expectFocus(field);
    await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 30_000 });
    await page.keyboard.type("What does each fix cost?");
    await press("Control+Enter");
    await chat.getByText("What does each fix cost?").waitFor();
    await chat.getByText(/Raising the limit to 3Gi costs about 1Gi more/).waitFor({
      timeout: 60_000,
    });
    await expectFocus(field);
    // The answer grew above the question field: the field the keyboard is in stayed on screen.
    await expect.poll(async () => (await focusStop(page)).inView).toBe(true);
  }, 150_000);

  it("opens and shuts interactions on the trace page", async () => {
    const { page } = rig;
    await open(`/sessions/${sessionId}/trace`);
    await page.getByRole("heading", { name: "triage" }).waitFor();
    const llm = page.getByRole("button", { name: /^LLM iteration/ }).first();
    await to(llm);
    await press("Enter");
    await page.getByRole("list", { name: "Conversation" }).waitFor();
    expect(await llm.getAttribute("aria-expanded")).toBe("true");
    expect(path()).toMatch(/\?llm=/);
    // Into the interaction: its messages' copy buttons and scrollable text.
    await press("Tab");
    await expectFocus(page.getByRole("button", { name: "Copy system message 1" }));
    await press("Tab");
    await expectFocus(page.getByRole("region", { name: "system message 1" }));
    await to(llm, { back: true });
    await press("Enter");
    await page.getByRole("list", { name: "Conversation" }).waitFor({ state: "detached" });
    expect(await llm.getAttribute("aria-expanded")).toBe("false");
    expect(path()).toBe(`/sessions/${sessionId}/trace`);

    // An MCP tool list, and its nested "Available tools".
    const toolList = page.getByRole("button", { name: /^MCP tool_list demo-cluster/ }).first();
    await to(toolList, { back: true });
    await press("Space");
    const detail = page.getByRole("region", { name: "MCP tool_list: demo-cluster" });
    await detail.waitFor();
    const tools = detail.getByRole("button", { name: "Available tools" });
    await to(tools);
    await press("Enter");
    await expect(detail.textContent()).resolves.toContain("get_pod_logs");
    expect(await tools.getAttribute("aria-expanded")).toBe("true");
  }, 90_000);

  it("submits an alert from the form, then cancels the running session", async () => {
    const { page } = rig;
    await open("/submit");
    await page.getByRole("heading", { name: "Submit an alert" }).waitFor();
    const form = page.getByRole("form", { name: "Submit alert" });
    await to(form.getByRole("combobox", { name: "Alert type" }));
    // The data format: one stop for the radio group, the arrows pick.
    await press("Tab");
    await expectFocus(form.getByRole("radio", { name: "JSON" }));
    await press("ArrowRight");
    await expectFocus(form.getByRole("radio", { name: "Free text" }));
    await expect.poll(() => here().isChecked()).toBe(true);
    await press("Tab");
    await expectFocus(form.getByRole("textbox", { name: "Alert data" }));
    await page.keyboard.type("SLOW-CANCEL: payments-api pods stuck in Pending");
    await to(form.getByRole("button", { name: "Submit alert" }));
    await press("Enter");
    await page.waitForURL(/\/sessions\/[^/]+$/);
    await page.locator('article[aria-busy="true"]').first().waitFor({ timeout: 60_000 });

    // There is no confirmation to dismiss: Enter on the button asks for the cancel.
    const cancel = page.getByRole("button", { name: "Cancel session" });
    await to(cancel);
    await press("Enter");
    await page
      .getByRole("heading", { level: 1 })
      .getByText("cancelled")
      .waitFor({ timeout: 60_000 });
  }, 150_000);

  it("reaches the MCP servers and the configuration on the system page", async () => {
    const { page } = rig;
    await open("/system");
    const servers = page.getByRole("table", { name: "MCP servers" });
    const tools = servers
      .getByRole("row", { name: /demo-cluster/ })
      .getByRole("button", { name: /^\d+ tools$/ });
    await tools.waitFor({ timeout: 30_000 });
    await to(servers);
    await to(tools);
    await press("Enter");
    expect(await tools.getAttribute("aria-expanded")).toBe("true");
    await servers.getByText("get_pod_logs").waitFor();
    // The configuration's tables, each a stop (the arrows scroll one wider than the window).
    for (const name of ["Chains", "Agents", "LLM providers"]) {
      await to(page.getByRole("table", { name }));
    }
  }, 90_000);

  /** Every page, over the demo session. */
  const pages = () => [
    { path: "/", ready: rig.page.getByRole("heading", { name: "Sessions", level: 1 }) },
    {
      path: `/sessions/${sessionId}`,
      ready: rig.page.getByRole("heading", { name: "Final analysis" }),
    },
    {
      path: `/sessions/${sessionId}/trace`,
      ready: rig.page.getByRole("heading", { name: "triage" }),
    },
    { path: "/submit", ready: rig.page.getByRole("heading", { name: "Submit an alert" }) },
    { path: "/usage", ready: rig.page.getByRole("table", { name: "Top sessions" }) },
    { path: "/system", ready: rig.page.getByRole("table", { name: "LLM providers" }) },
  ];
  /** Opens a page in the theme, switched from the keyboard if it is not the one shown. */
  const openIn = async (theme: "light" | "dark", p: ReturnType<typeof pages>[number]) => {
    await open(p.path);
    await p.ready.waitFor({ timeout: 30_000 });
    const current = await rig.page.evaluate(() => document.documentElement.dataset.theme);
    if (current === theme) return;
    await to(rig.page.getByRole("button", { name: `Switch to ${theme} theme` }));
    await press("Enter");
    await open(p.path);
    await p.ready.waitFor({ timeout: 30_000 });
  };

  it("shows focus at every stop of every page, and Tab and Shift+Tab go round it the same way", async () => {
    const found: Record<string, string[]> = {};
    for (const p of pages()) {
      await openIn("light", p);
      const forward = await tabThrough(rig.page);
      const back = await tabThrough(rig.page, { back: true });
      expect(forward[0]?.what, p.path).toBe('a "Skip to content"');
      expect(forward.length, p.path).toBeGreaterThan(5);
      const bad = unmarked([...forward, ...back]);
      if (bad.length) found[p.path] = bad;
      // No trap either way: Shift+Tab visits the stops Tab does, in reverse.
      expect(back.map((s) => s.what).reverse(), p.path).toEqual(forward.map((s) => s.what));
    }
    expect(found).toEqual({});
  }, 240_000);

  it("shows focus at every stop of every page in the dark theme", async () => {
    const found: Record<string, string[]> = {};
    for (const p of pages()) {
      await openIn("dark", p);
      const bad = unmarked(await tabThrough(rig.page));
      if (bad.length) found[p.path] = bad;
    }
    expect(found).toEqual({});
  }, 180_000);
});
