import { resolve } from "node:path";
import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeProvider } from "../../llm-service/test/fakes/http.ts";
import { cachingClaude } from "../e2e/claude-cache-fake.ts";
import { submitAlert, waitStatus } from "../e2e/scenario-support.ts";
import { ROOT } from "../e2e/support.ts";
import { type DashboardRig, startDashboardRig } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/prompt-caching");

/**
 * Prompt caching on the trace page in Chromium: the investigation of the e2e prompt-caching
 * config (a loopback Claude that writes the tool prefix on the first call and reads it on the
 * second) shows each call's cache write or read next to its tokens, and its reasoning effort.
 */
describe("prompt caching on the dashboard's trace", () => {
  let rig: DashboardRig;
  let fake: FakeProvider;
  let sessionId = "";

  beforeAll(async () => {
    fake = await startFakeProvider(cachingClaude);
    rig = await startDashboardRig({
      configDir: CONFIG,
      env: { FAKE_ANTHROPIC_URL: fake.url, E2E_CLAUDE_KEY: "sk-ant-e2e-0123456789abcdef" },
    });
    sessionId = await submitAlert(rig.system, "Cached");
    const done = await waitStatus(rig.system, sessionId, TERMINAL_SESSION_STATUSES, 60_000);
    expect(done.status).toBe("completed");
  }, 300_000);
  afterAll(async () => {
    await rig?.stop();
    await fake?.close();
  }, 60_000);

  it("lists the cache write and the cache read; the call's detail names its effort", async () => {
    const { page } = rig;
    await page.goto(rig.url(`/sessions/${sessionId}/trace`));
    // 200 uncached + 4000 written + 50 out; then 250 uncached + 4000 read + 48 out.
    await page.getByText("4250 tok · 4000 cache write", { exact: false }).waitFor({
      timeout: 10_000,
    });
    const hit = page.getByRole("button", { name: /4298 tok · 4000 cache read/ });
    await hit.waitFor({ timeout: 10_000 });
    await hit.click();
    await page.getByText("· 4000 cache read · effort high", { exact: false }).waitFor({
      timeout: 10_000,
    });
    await rig.shot("trace-prompt-cache");
  }, 30_000);
});
