import { resolve } from "node:path";
import { type FakeGithub, startFakeGithub } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/runbooks");
const OOM = "# OOM runbook\n\n1. RUNBOOK-STEP: compare the heap with the memory limit.";

/**
 * The submit form's runbook picker in Chromium: runbooks listed from a loopback GitHub, the
 * chosen one fetched for the investigation and shown on the session page; a URL on a host
 * outside the allowlist refused on its field; no GitHub token: a system warning.
 */
describe("runbooks in the dashboard", () => {
  let rig: DashboardRig;
  let gh: FakeGithub;

  beforeAll(async () => {
    gh = await startFakeGithub({
      "acme/runbooks/main/sre/oom.md": OOM,
      "acme/runbooks/main/sre/k8s/crashloop.md": "# CrashLoop",
    });
    rig = await startDashboardRig({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
      env: { FAKE_GITHUB_URL: gh.url, GITHUB_TOKEN: "" },
    });
  }, 240_000);
  afterAll(async () => {
    await rig?.stop();
    await gh?.close();
  }, 60_000);

  it("warns that repo_url is set without a GitHub token", async () => {
    const { page } = rig;
    await page.goto(rig.url("/submit"));
    await page
      .getByRole("alert", { name: "System warnings" })
      .getByText("GitHub token not configured")
      .waitFor();
  });

  it("offers the repository's runbooks, still takes a free URL, and refuses one outside the allowlist", async () => {
    const { page } = rig;
    await page.goto(rig.url("/submit"));
    const picker = page.getByLabel("Runbook from the repository");
    await picker.locator("option", { hasText: "sre/oom.md" }).waitFor({ state: "attached" });
    const options = await picker.locator("option").allTextContents();
    expect(options).toEqual([
      "Default runbook (or a URL below)",
      "sre/k8s/crashloop.md",
      "sre/oom.md",
    ]);

    await page.getByLabel("Alert type").selectOption("Quick");
    await page.getByLabel("Alert data").fill(JSON.stringify({ pod: "payments-api" }));
    // A free URL: the server refuses its host, and says so on the field; nothing is created.
    await page.getByLabel("Runbook URL").fill("https://evil.example.com/runbook.md");
    await page.getByRole("button", { name: "Submit alert" }).click();
    await page
      .getByText(/invalid runbook URL: host evil\.example\.com is not an allowed/)
      .waitFor();
    expect(new URL(page.url()).pathname).toBe("/submit");

    // Picking a listed runbook fills the URL field with it.
    await picker.selectOption({ label: "sre/oom.md" });
    expect(await page.getByLabel("Runbook URL").inputValue()).toBe(
      `${gh.url}/acme/runbooks/blob/main/sre/oom.md`,
    );
    await page.getByRole("button", { name: "Submit alert" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/);

    // The session page says which runbook the agents used and that it was fetched.
    const runbook = page.getByRole("region", { name: "Runbook", exact: true });
    await runbook.getByTestId("runbook-source").getByText("fetched").waitFor({ timeout: 60_000 });
    await runbook.getByRole("button", { name: "Runbook used" }).click();
    expect(await runbook.getByRole("region", { name: "runbook text" }).textContent()).toBe(OOM);
    await rig.shot("runbook-session");
  }, 120_000);
});
