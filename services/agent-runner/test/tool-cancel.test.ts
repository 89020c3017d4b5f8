import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listSessionTimeline } from "@tarsy/db";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ExecutionAbortedError } from "../src/errors.ts";
import { runExecution } from "../src/execution.ts";
import { createGatewayTools } from "../src/gateway.ts";
import {
  createEnv,
  type Env,
  logger,
  runnerDeps,
  type ServiceProcess,
  seedExecution,
  startGatewayProcess,
  startLlm,
  waitFor,
} from "./support.ts";

let env: Env;
let gateway: ServiceProcess;
let logDir: string;
let serverLog: string;
beforeAll(async () => {
  logDir = mkdtempSync(join(tmpdir(), "blocking-server-"));
  serverLog = join(logDir, "calls.log");
  env = await createEnv({ blockingServerLog: serverLog });
  gateway = await startGatewayProcess(env);
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  await env?.cleanup();
  rmSync(logDir, { recursive: true, force: true });
});

/** What the blocking MCP server has seen, one entry a line (`started w1`, `aborted w1`). */
function seen(): string[] {
  try {
    return readFileSync(serverLog, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

describe("with the real mcp-gateway and an MCP server whose tool blocks", () => {
  test("cancelling the execution during a tool call aborts the call at the MCP server", async () => {
    const llm = await startLlm([
      { tool_calls: [{ id: "w1", name: "blocking.wait", arguments: { call: "w1" } }] },
    ]);
    try {
      const request = await seedExecution(env);
      const client = createMcpGatewayClient(env.bus);
      const controller = new AbortController();
      const running = runExecution(
        runnerDeps(env, llm.client, createGatewayTools(client, logger)),
        request,
        controller.signal,
      );
      await waitFor(
        "the call to reach the MCP server",
        () => seen().includes("started w1"),
        30_000,
      );
      controller.abort(new ExecutionAbortedError("cancelled"));
      const finished = await running;
      expect(finished.status).toBe("cancelled");
      const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
      expect(timeline.map((e) => [e.eventType, e.status])).toEqual([
        ["llm_tool_call", "cancelled"],
      ]);

      // Not only did the runner stop waiting: the gateway closed the execution's MCP session
      // under the running call, and the server's handler saw its call aborted.
      await waitFor("the MCP server to see the abort", () => seen().includes("aborted w1"), 10_000);
      expect(seen()).toEqual(["started w1", "aborted w1"]);
      expect((await client.health()).open_executions).toBe(0);
    } finally {
      await llm.stop();
    }
  }, 60_000);
});
