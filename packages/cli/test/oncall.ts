import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  LLMInteractionDetailSchema,
  MCPInteractionDetailSchema,
  SessionDetailSchema,
  SessionListResponseSchema,
  SystemConfigResponseSchema,
  TraceListResponseSchema,
} from "@tarsy/contracts";
import { until } from "@tarsy/testkit";
import { expect, it } from "vitest";
import type { z } from "zod";
import { startCookieProxy } from "./cookie-proxy.ts";
import { DEMO_ALERT, ROOT, type System, tarsy } from "./support.ts";

/**
 * LLM script entries for the on-call cases, answered before the demo's: an alert naming
 * `cli-oncall-hang` keeps its first LLM call waiting (until cancelled), one naming
 * `cli-oncall-fail` gets an authentication error (no fallback is tried) that fails the session.
 */
export const ONCALL_LLM_SCRIPT = `
- match: { agent: "/^DemoInvestigator/", user: "cli-slow-triage" }
  text: "Triage: payments-api-7f9c6d5b8-x2kqz is crash-looping (OOMKilled, exit 137); the deep dive looks at its logs and events."
  chunk_size: 4
  chunk_delay_ms: 400
- match: { agent: "/^DemoInvestigator/", user: "cli-oncall-hang" }
  delay_ms: 600000
  text: "never sent: the session is cancelled first"
- match: { agent: "/^DemoInvestigator/", user: "cli-oncall-fail" }
  error: { message: "scripted provider refused the key", code: auth, retryable: false }
- match: { agent: "/^DemoInvestigator/", user: "cli-oncall-fail" }
  error: { message: "scripted provider refused the key", code: auth, retryable: false }
`;

/** What the API answers at `path`, parsed with its contract schema. */
async function api<T extends z.ZodType>(sys: System, path: string, schema: T): Promise<z.infer<T>> {
  const response = await fetch(`${sys.env.TARSY_API_URL}${path}`);
  expect(response.status).toBe(200);
  return schema.parse(await response.json());
}

/** stdout of a CLI run with --output json, parsed with the contract schema. */
function parsed<T extends z.ZodType>(stdout: string, schema: T): z.infer<T> {
  return schema.parse(JSON.parse(stdout));
}

/**
 * The on-call commands against the running system of live.test.ts (one stack for the
 * file): session list/cancel/trace, watch's exit codes, alert submit --mcp, --output json,
 * and TARSY_COOKIE_FILE through an oauth2-proxy-like gate.
 */
export function onCallTests(context: { sys(): System; completedSession(): string }): void {
  let failedId = "";
  let cancelledId = "";
  const env = () => context.sys().env;
  const submit = async (text: string) => {
    const run = await tarsy(["alert", "submit", "-"], { env: env(), stdin: text });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    return run.stdout.trim();
  };

  it("session watch exits 3 when the session fails", async () => {
    failedId = await submit("cli-oncall-fail: payments-api is crash looping");
    const watch = await tarsy(["session", "watch", failedId], { env: env(), timeoutMs: 90_000 });
    expect(watch.code).toBe(3);
    expect(watch.stdout).toMatch(/● session failed.*\n$/);
    const show = await tarsy(["session", "show", failedId], { env: env() });
    expect(show.stdout).toMatch(/ {2}Status: +failed/);
  }, 120_000);

  it("session cancel stops a running session: watch exits 4, the session is cancelled; a second cancel is refused (409), an unknown id is 404", async () => {
    const sys = context.sys();
    cancelledId = await submit("cli-oncall-hang: payments-api is stuck");
    const watching = tarsy(["session", "watch", cancelledId], { env: env(), timeoutMs: 90_000 });
    // Running: its first LLM call is under way and waits.
    await until(
      async () =>
        (await api(sys, `/api/v1/sessions/${cancelledId}`, SessionDetailSchema)).status ===
        "in_progress",
      { what: "the session to run", timeoutMs: 30_000 },
    );
    // A reason over 500 characters is refused before anything is sent.
    const tooLong = await tarsy(["session", "cancel", cancelledId, "--reason", "x".repeat(501)], {
      env: env(),
    });
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(/--reason is 501 characters; at most 500 are kept/);
    expect((await api(sys, `/api/v1/sessions/${cancelledId}`, SessionDetailSchema)).status).toBe(
      "in_progress",
    );
    const cancel = await tarsy(
      ["session", "cancel", cancelledId, "--reason", "duplicate of INC-123"],
      { env: { ...env(), TARSY_USER: "alice" } },
    );
    expect(cancel.stderr).toBe("");
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`session ${cancelledId}: cancel requested\n`);

    const watch = await watching;
    expect(watch.code).toBe(4);
    expect(watch.stdout).toMatch(/● session cancelled.*\n$/);
    const [show, again, unknown] = await Promise.all([
      tarsy(["session", "show", cancelledId], { env: env() }),
      tarsy(["session", "cancel", cancelledId], { env: env() }),
      tarsy(["session", "cancel", "no-such-session"], { env: env() }),
    ]);
    // Who cancelled and why, as a cancellation (not an error).
    expect(show.stdout).toMatch(
      / {2}Status: +cancelled — Cancelled by alice: duplicate of INC-123\n/,
    );
    expect(await api(sys, `/api/v1/sessions/${cancelledId}`, SessionDetailSchema)).toMatchObject({
      cancelled_by: "alice",
      cancel_reason: "duplicate of INC-123",
    });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr).toBe(
      `tarsy session cancel: nothing to cancel: session ${cancelledId} is cancelled and has no chat answer running\n`,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^tarsy session cancel: no session no-such-session \(API error 404/,
    );
  }, 120_000);

  it("session list prints a table with page and total; --status, --type, --search and paging narrow it; --output json is the API's answer", async () => {
    const sys = context.sys();
    const completed = context.completedSession();
    const [all, failed, both, repeated, search, noType, badStatus] = await Promise.all([
      tarsy(["session", "list"], { env: env() }),
      tarsy(["session", "list", "--status", "failed"], { env: env() }),
      tarsy(["session", "list", "--status", "failed,cancelled"], { env: env() }),
      tarsy(["session", "list", "-s", "cancelled", "-s", "failed", "--output", "json"], {
        env: env(),
      }),
      tarsy(["session", "list", "--search", "cli-oncall-hang"], { env: env() }),
      tarsy(["session", "list", "--type", "NoSuchAlert"], { env: env() }),
      tarsy(["session", "list", "--status", "stuck"], { env: env() }),
    ]);
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);
    const header = all.stdout.split("\n")[0] ?? "";
    // The page has a cancelled session: a NOTE says who cancelled it and why.
    expect(header).toMatch(/^ID +STATUS +TYPE +CHAIN +CREATED +DURATION +NOTE$/);
    expect(all.stdout).toMatch(
      new RegExp(
        `\\n${completed} +completed +PodCrashLooping +demo-incident +\\S+Z +\\d\\S* m?s\\n`,
      ),
    );
    expect(all.stdout).toMatch(
      new RegExp(
        `\\n${cancelledId} +cancelled +PodCrashLooping .* +Cancelled by alice: duplicate of INC-123\\n`,
      ),
    );
    const total = Number(/\npage 1 of 1, (\d+) sessions\n$/.exec(all.stdout)?.[1]);
    expect(total).toBeGreaterThanOrEqual(4);
    expect(all.stdout.trimEnd().split("\n")).toHaveLength(total + 2);

    const rows = (text: string) => text.split("\n").slice(1, -2);
    expect(rows(failed.stdout)).toEqual([
      expect.stringMatching(new RegExp(`^${failedId} +failed `)),
    ]);
    expect(failed.stdout).toMatch(/\npage 1 of 1, 1 session\n$/);
    expect(
      rows(both.stdout)
        .map((r) => r.split(" ")[0])
        .sort(),
    ).toEqual([failedId, cancelledId].sort());
    expect(both.stdout).toMatch(/\npage 1 of 1, 2 sessions\n$/);
    expect(repeated.code).toBe(0);
    expect(JSON.parse(repeated.stdout)).toEqual(
      await api(sys, "/api/v1/sessions?status=cancelled,failed", SessionListResponseSchema),
    );
    expect(rows(search.stdout).map((r) => r.split(" ")[0])).toEqual([cancelledId]);
    expect(noType.stdout).toBe("No sessions match.\npage 1 of 1, 0 sessions\n");
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(
      /^tarsy session list: --status: .*\n\nUsage: tarsy session list/,
    );

    // Paging: one session a page, the second page is the second newest.
    const [page2, first2] = await Promise.all([
      tarsy(["session", "list", "--page-size", "1", "--page", "2"], { env: env() }),
      tarsy(["session", "list", "--page-size", "2", "--output", "json"], { env: env() }),
    ]);
    const second = parsed(first2.stdout, SessionListResponseSchema).sessions[1];
    expect(rows(page2.stdout)).toEqual([expect.stringMatching(new RegExp(`^${second?.id} `))]);
    expect(page2.stdout).toMatch(new RegExp(`\\npage 2 of ${total}, ${total} sessions\\n$`));
  }, 90_000);

  it("session trace prints the interaction tree with the scripted tool calls; --llm and --mcp one interaction in full; --output json is the API's answer", async () => {
    const sys = context.sys();
    const id = context.completedSession();
    const [tree, json] = await Promise.all([
      tarsy(["session", "trace", id], { env: env() }),
      tarsy(["session", "trace", id, "-o", "json"], { env: env() }),
    ]);
    expect(tree.stderr).toBe("");
    expect(tree.code).toBe(0);
    const out = tree.stdout;
    expect(out.startsWith(`Trace of session ${id}\nStage triage (`)).toBe(true);
    // The scripted investigator: list the tools, then LLM call → tool call, twice, then the analysis.
    expect(out).toMatch(
      new RegExp(
        [
          "\\n {2}DemoInvestigator \\(execution \\S+\\)",
          " {4}MCP \\S+ {2}tool_list {2}demo-cluster {2}\\d.*",
          " {4}LLM \\S+ {2}iteration 1 {2}scripted-demo {2}[\\d.]+ m?s {2}\\d+ tokens \\(\\d+ in, \\d+ out\\)",
          " {4}MCP \\S+ {2}tool_call {2}demo-cluster\\.get_pods {2}[\\d.]+ m?s",
          " {4}LLM \\S+ {2}iteration 2 .*",
          " {4}MCP \\S+ {2}tool_call {2}demo-cluster\\.get_pod_logs .*",
          " {4}LLM \\S+ {2}final_analysis \\(iteration 3\\) .*\\n",
        ].join("\\n"),
      ),
    );
    expect(out).toMatch(/\nStage deep-dive \(\S+\)\n {2}LogAgent \(execution \S+\)\n/);
    expect(out).toMatch(
      /\n {2}EventsAgent \(execution \S+\)\n(?: {4}.*\n)*? {4}MCP \S+ {2}tool_call {2}demo-cluster\.get_secret /,
    );
    expect(out).toMatch(
      /\nSession interactions\n {2}LLM \S+ {2}executive_summary \(iteration 1\) {2}scripted-demo /,
    );
    const trace = parsed(json.stdout, TraceListResponseSchema);
    expect(trace).toEqual(await api(sys, `/api/v1/sessions/${id}/trace`, TraceListResponseSchema));

    const triage = trace.stages[0]?.executions[0];
    const firstLlm = triage?.llm_interactions.find((i) => i.iteration === 1)?.id ?? "";
    const getPods = triage?.mcp_interactions.find((i) => i.tool_name === "get_pods")?.id ?? "";
    expect(firstLlm).not.toBe("");
    expect(getPods).not.toBe("");
    expect(out).toContain(`MCP ${getPods}  tool_call  demo-cluster.get_pods`);

    const [llm, llmJson, mcp, mcpJson, unknown, both] = await Promise.all([
      tarsy(["session", "trace", id, "--llm", firstLlm], { env: env() }),
      tarsy(["session", "trace", id, "--llm", firstLlm, "--json"], { env: env() }),
      tarsy(["session", "trace", id, "--mcp", getPods], { env: env() }),
      tarsy(["session", "trace", id, "--mcp", getPods, "--output", "json"], { env: env() }),
      tarsy(["session", "trace", id, "--mcp", "no-such-interaction"], { env: env() }),
      tarsy(["session", "trace", id, "--mcp", getPods, "--llm", firstLlm], { env: env() }),
    ]);
    expect(llm.code).toBe(0);
    expect(llm.stdout).toMatch(
      new RegExp(
        `^LLM interaction ${firstLlm}\n {2}Type: +iteration 1\n {2}Model: +scripted-demo\n`,
      ),
    );
    expect(llm.stdout).toMatch(/\nConversation \(\d+ messages\):\n--- system ---\n/);
    expect(llm.stdout).toMatch(/\n--- user ---\n[\s\S]*PodCrashLooping/);
    expect(llm.stdout).toContain(
      "\nResponse:\n--- thinking ---\nThe alert names a crash-looping pod in payments. I should list the pods first.\n--- text ---\nLet me look at the pods in the payments namespace.\n--- tool calls ---\n→ ",
    );
    expect(llm.stdout).toMatch(
      /--- tool calls ---\n→ demo-cluster\.get_pods \{"namespace":"payments"\} {2}\(call \S+\)\n$/,
    );
    expect(JSON.parse(llmJson.stdout)).toEqual(
      await api(sys, `/api/v1/sessions/${id}/trace/llm/${firstLlm}`, LLMInteractionDetailSchema),
    );

    expect(mcp.code).toBe(0);
    expect(mcp.stdout).toMatch(
      new RegExp(
        `^MCP interaction ${getPods}\n {2}Type: +tool_call\n {2}Tool: +demo-cluster\\.get_pods\n`,
      ),
    );
    expect(mcp.stdout).toContain('\nArguments:\n{\n  "namespace": "payments"\n}\n\nResult:\n');
    expect(mcp.stdout).toContain("payments-api-7f9c6d5b8-x2kqz");
    expect(JSON.parse(mcpJson.stdout)).toEqual(
      await api(sys, `/api/v1/sessions/${id}/trace/mcp/${getPods}`, MCPInteractionDetailSchema),
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^tarsy session trace: API error 404 not_found: /);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give --llm or --mcp, not both");
  }, 90_000);

  it("alert submit --mcp sends the request's MCP selection; an unknown server is refused", async () => {
    const sys = context.sys();
    const [submitted, unknown] = await Promise.all([
      tarsy(
        ["alert", "submit", "-", "--mcp", "demo-cluster:get_pods,get_events", "--output", "json"],
        { env: env(), stdin: JSON.stringify(DEMO_ALERT) },
      ),
      tarsy(["alert", "submit", "-", "--mcp", "no-such-server"], {
        env: env(),
        stdin: JSON.stringify(DEMO_ALERT),
      }),
    ]);
    expect(submitted.stderr).toBe("");
    expect(submitted.code).toBe(0);
    const { session_id: id } = JSON.parse(submitted.stdout) as { session_id: string };
    const session = await api(sys, `/api/v1/sessions/${id}`, SessionDetailSchema);
    expect(session.mcp_selection).toEqual({
      servers: [{ name: "demo-cluster", tools: ["get_pods", "get_events"] }],
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /API error 400 unknown_mcp_server: unknown MCP server\(s\): no-such-server/,
    );
  }, 60_000);

  it("--output json prints exactly the data: dlq list as --json does, config check as GET /api/v1/system/config", async () => {
    const sys = context.sys();
    const [dlqJson, dlqOutput, config, bad] = await Promise.all([
      tarsy(["dlq", "list", "--json"], { env: env() }),
      tarsy(["dlq", "list", "--output", "json"], { env: env() }),
      // The demo's MCP servers are found through TARSY_REPO_ROOT, as the stack sets it.
      tarsy(["config", "check", "--config-dir", resolve(ROOT, "deploy/demo"), "-o", "json"], {
        env: { ...env(), TARSY_REPO_ROOT: ROOT },
      }),
      tarsy(["dlq", "list", "--output", "yaml"], { env: env() }),
    ]);
    expect(dlqOutput.code).toBe(0);
    expect(dlqOutput.stdout).not.toBe("");
    expect(dlqOutput.stdout).toBe(dlqJson.stdout);
    expect(config.code).toBe(0);
    expect(parsed(config.stdout, SystemConfigResponseSchema)).toEqual(
      await api(sys, "/api/v1/system/config", SystemConfigResponseSchema),
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--output must be text or json, not "yaml"');
  }, 60_000);

  it("TARSY_COOKIE_FILE sends oauth2-proxy's cookie on requests and the WebSocket upgrade", async () => {
    const sys = context.sys();
    const id = context.completedSession();
    const cookie = "_oauth2_proxy=cli-test-session|signed=";
    const proxy = await startCookieProxy({
      apiUrl: sys.env.TARSY_API_URL ?? "",
      wsUrl: sys.env.TARSY_WS_URL ?? "",
      cookie,
    });
    try {
      const dir = mkdtempSync(join(tmpdir(), "tarsy-cli-cookie-"));
      const plain = join(dir, "cookie");
      writeFileSync(plain, `${cookie}\n`);
      const jar = join(dir, "cookies.txt");
      writeFileSync(
        jar,
        `# Netscape HTTP Cookie File\n#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\t_oauth2_proxy\tcli-test-session|signed=\n`,
      );
      const through = { ...sys.env, TARSY_API_URL: proxy.url, TARSY_WS_URL: proxy.wsUrl };
      const [list, watch, show, noList, noWatch, missing] = await Promise.all([
        tarsy(["session", "list", "--status", "completed"], {
          env: { ...through, TARSY_COOKIE_FILE: plain },
        }),
        tarsy(["session", "watch", id], { env: { ...through, TARSY_COOKIE_FILE: plain } }),
        tarsy(["session", "show", id], { env: { ...through, TARSY_COOKIE_FILE: jar } }),
        tarsy(["session", "list"], { env: through }),
        tarsy(["session", "watch", id], { env: through }),
        tarsy(["session", "list"], { env: { ...through, TARSY_COOKIE_FILE: join(dir, "none") } }),
      ]);
      expect(list.stderr).toBe("");
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(new RegExp(`\\n${id} +completed `));
      expect(watch.code).toBe(0);
      expect(watch.stdout.trimEnd().endsWith("● session completed")).toBe(true);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain(`Session ${id}`);
      expect(noList.code).toBe(1);
      expect(noList.stderr).toBe("tarsy session list: API error 401 http_error: Unauthorized\n");
      expect(noWatch.code).toBe(1);
      expect(noWatch.stderr).toContain("refused the connection: HTTP 401");
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(
        /^tarsy: invalid environment\n {2}TARSY_COOKIE_FILE .*none: ENOENT/,
      );
    } finally {
      await proxy.close();
    }
  }, 60_000);
}
