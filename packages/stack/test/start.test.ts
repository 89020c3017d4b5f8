import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { connectBus, createBusAdmin } from "@tarsy/bus";
import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { createLogger } from "@tarsy/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { ensureNats, freePort, isListening } from "../src/infra.ts";
import { freshEnv, Run } from "./support.ts";

const runs: Run[] = [];
const run = (command: string, env = freshEnv()) => {
  const r = new Run(command, env);
  runs.push(r);
  return r;
};

afterEach(() => {
  for (const r of runs.splice(0)) r.kill();
});

describe("pnpm start (the README's start command) on a fresh machine", () => {
  it("runs the demo on embedded Postgres, the printed CLI command watches it live, Ctrl-C stops everything", async () => {
    const start = run("pnpm start");
    await start.line(/DEMO MODE: scripted LLM answers/, 60_000);
    const pg = await start.line(
      /postgres: embedded Postgres on port (\d+); migrations applied/,
      120_000,
    );
    await start.line(/nats: local NATS on 4222/, 10_000);
    const api = await start.line(/API and dashboard: (http:\/\/\S+)/, 120_000);
    const watchLine = await start.line(
      /watch it live:\s+(.*pnpm tarsy session watch (\S+))$/,
      30_000,
    );
    const [, watchCommand, sessionId] = watchLine;

    // The command exactly as printed, pasted into a second terminal.
    const watch = run(watchCommand ?? "");
    expect(await watch.exited, watch.output).toBe(0);
    expect(watch.output).toContain(sessionId);
    // The live timeline: the tool calls the demo investigator made and the final analysis.
    expect(watch.output).toMatch(/tool call demo-cluster\.get_pods\(\{"namespace":"payments"\}\)/);
    expect(watch.output).toContain("## Root cause");
    expect(watch.output).toMatch(/completed/);

    await start.line(/demo investigation completed\./, 60_000);
    await start.line(/executive summary: payments-api is crash-looping/, 5_000);
    await start.line(/running; Ctrl-C to stop\./, 5_000);
    const session = (await (await fetch(`${api[1]}/api/v1/sessions/${sessionId}`)).json()) as {
      status: string;
      stages: { stage_name: string; status: string }[];
    };
    expect(session.status).toBe("completed");
    expect(session.stages.map((s) => s.stage_name)).toContain("deep-dive - Synthesis");
    // A clean demo: nothing failed or warned on the way.
    expect(start.lines.filter((l) => /\b(ERROR|FATAL)\b/.test(l))).toEqual([]);

    start.interrupt();
    await start.exited;
    await start.line(/stopping…/, 1_000);
    // Nothing is left running: every process of the group has exited, ports are free.
    await expect.poll(() => start.groupAlive(), { timeout: 30_000 }).toBe(false);
    const apiPort = Number(new URL(api[1] ?? "").port);
    expect(await isListening("127.0.0.1", apiPort)).toBe(false);
    expect(await isListening("127.0.0.1", Number(pg[1]))).toBe(false);
  }, 300_000);

  it("--once exits 0 once the demo investigation completed (the smoke test)", async () => {
    const once = run("pnpm start --once");
    expect(await once.exited, once.output.slice(-3000)).toBe(0);
    expect(once.output).toContain("demo investigation completed.");
    expect(once.output).toContain("## Root cause");
  }, 300_000);
});

type Detail = {
  status: string;
  chain_id: string;
  final_analysis: string | null;
  stages: Array<{
    stage_name: string;
    kind: string;
    status: string;
    executions: Array<{ agent_name: string; status: string }>;
  }>;
};

/** Submits an alert to a running stack; its session id. */
async function submit(api: string, alert_type: string, data: object): Promise<string> {
  const submitted = await fetch(`${api}/api/v1/alerts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ alert_type, data }),
  });
  expect(submitted.status, await submitted.clone().text()).toBe(202);
  return ((await submitted.json()) as { session_id: string }).session_id;
}

/** The session once it has ended (any terminal status). */
async function finished(api: string, sessionId: string): Promise<Detail> {
  let detail = { status: "" } as Detail;
  await expect
    .poll(
      async () => {
        detail = (await (await fetch(`${api}/api/v1/sessions/${sessionId}`)).json()) as Detail;
        return (TERMINAL_SESSION_STATUSES as readonly string[]).includes(detail.status);
      },
      { timeout: 90_000, interval: 500 },
    )
    .toBe(true);
  return detail;
}

describe("pnpm start --config-dir DIR --llm-script FILE (a configuration tried offline)", () => {
  it("runs your chains on the built-in Google provider with no key, every LLM call answered from the script", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tarsy-offline-"));
    try {
      writeFileSync(
        join(dir, "tarsy.yaml"),
        [
          "agents:",
          "  OfflineAgent:",
          "    custom_instructions: Investigate from the alert alone.",
          "agent_chains:",
          "  offline-chain:",
          "    alert_types: [OfflineCheck]",
          "    stages:",
          "      - name: look",
          "        agents: [OfflineAgent]",
          "",
        ].join("\n"),
      );
      const script = join(dir, "script.yaml");
      writeFileSync(
        script,
        [
          "responses:",
          '  - match: { agent: "/^OfflineAgent/" }',
          '    text: "## Offline answer\\nThe disk on node-7 is full."',
          '  - text: "node-7 ran out of disk."',
          "",
        ].join("\n"),
      );
      // No provider key (freshEnv removes them): without --llm-script this would be demo mode.
      const start = run(`pnpm start --runners 1 --config-dir ${dir} --llm-script ${script}`);
      await start.line(/SCRIPTED LLM: every LLM call is answered from (\S+)/, 60_000);
      await start.line(new RegExp(`configuration: ${dir}`), 5_000);
      const api = (await start.line(/API and dashboard: (http:\/\/\S+)/, 180_000))[1] ?? "";
      expect(start.output).not.toContain("DEMO MODE");

      const submitted = await fetch(`${api}/api/v1/alerts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ alert_type: "OfflineCheck", data: { node: "node-7" } }),
      });
      expect(submitted.status).toBe(202);
      const { session_id } = (await submitted.json()) as { session_id: string };
      const detail = await finished(api, session_id);
      expect(detail.status).toBe("completed");
      expect(detail.chain_id).toBe("offline-chain");
      expect(detail.final_analysis).toContain("The disk on node-7 is full.");
      // The LLM call went out for the configured provider, and the script answered it.
      const trace = (await (
        await fetch(`${api}/api/v1/sessions/${session_id}/trace`)
      ).json()) as unknown;
      expect(JSON.stringify(trace)).toContain("google-default");

      start.interrupt();
      await start.exited;
      await expect.poll(() => start.groupAlive(), { timeout: 30_000 }).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

describe("pnpm start on the Go TARSy's example configuration (tarsy.yaml and llm-providers.yaml)", () => {
  it("starts with none of its variables set and its MCP servers unreachable, and its chains investigate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tarsy-go-example-"));
    try {
      const script = join(dir, "script.yaml");
      writeFileSync(
        script,
        [
          "responses:",
          '  - text: "## Root cause\\nThe container ran out of memory."',
          "    repeat: true",
          "",
        ].join("\n"),
      );
      const config = resolve(import.meta.dirname, "../../config/test/go-tarsy/full");
      const start = run(`pnpm start --runners 1 --config-dir ${config} --llm-script ${script}`);
      const api = (await start.line(/API and dashboard: (http:\/\/\S+)/, 180_000))[1] ?? "";
      // What the example leaves to the environment is said, not fatal.
      expect(start.output).toContain(
        'environment variable "KUBECONFIG" is not set; using an empty value',
      );

      // One agent whose MCP servers cannot be reached; then two agents in parallel and a synthesis.
      const single = await finished(api, await submit(api, "PodCrashLoop", { pod: "web-1" }));
      expect(single).toMatchObject({ status: "completed", chain_id: "kubernetes-pod-crashloop" });
      expect(single.final_analysis).toContain("The container ran out of memory.");
      const parallel = await finished(
        api,
        await submit(api, "Kubernetes - Multiple Agents", { namespace: "shop" }),
      );
      expect(parallel).toMatchObject({
        status: "completed",
        chain_id: "kubernetes-multiple-agents",
      });
      const investigation = parallel.stages.find((s) => s.stage_name === "Investigation");
      expect(investigation?.executions.map((e) => [e.agent_name, e.status]).sort()).toEqual([
        ["KubernetesAgent", "completed"],
        ["security-agent", "completed"],
      ]);
      expect(parallel.stages.find((s) => s.kind === "synthesis")?.status).toBe("completed");
      // An unreachable server is logged once, not at every health check.
      const failures = start.output.match(/server=monitoring-server err=/g) ?? [];
      expect(failures).toHaveLength(1);

      start.interrupt();
      await start.exited;
      await expect.poll(() => start.groupAlive(), { timeout: 30_000 }).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

describe("NATS for the local stack", () => {
  it("starts a JetStream nats-server from PATH when none is listening, and stops it", async () => {
    const port = await freePort();
    const nats = await ensureNats(undefined, { host: "127.0.0.1", port });
    try {
      expect(nats.describe).toMatch(/^nats-server started on port \d+$/);
      const bus = await connectBus({
        servers: nats.url,
        name: "start-test",
        logger: createLogger({ service: "start-test", level: "silent" }),
      });
      await createBusAdmin(bus).provision(); // creates the JetStream streams: JetStream is on
      await bus.drain();
    } finally {
      await nats.stop();
    }
    const url = new URL(nats.url.replace("nats://", "http://"));
    await expect
      .poll(() => isListening("127.0.0.1", Number(url.port)), { timeout: 10_000 })
      .toBe(false);
  });

  it("uses a server already listening at the local address", async () => {
    const nats = await ensureNats(undefined);
    expect(nats).toMatchObject({ url: "nats://127.0.0.1:4222", describe: "local NATS on 4222" });
  });
});
