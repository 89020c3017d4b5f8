/**
 * `{{.SESSION_ID}}` end to end: two agents run at once through the real mcp-gateway; the MCP
 * server (built with the SDK) sees each agent's own execution id in `X-Session-ID`, and each
 * execution's `session_cleanup_url` gets its DELETE once the agent is done.
 */
import { listSessionTimeline } from "@tarsy/db";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type SessionServer,
  startSessionServer,
} from "../../mcp-gateway/test/servers/session-server.ts";
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

let sandbox: SessionServer;
let env: Env;
let gateway: ServiceProcess;
beforeAll(async () => {
  sandbox = await startSessionServer();
  env = await createEnv({ sandboxBase: sandbox.base });
  gateway = await startGatewayProcess(env);
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  await env?.cleanup();
  await sandbox?.close();
});

const turn = (alert: string) => [
  {
    match: { user: alert },
    text: "Asking the sandbox.",
    tool_calls: [{ id: `${alert}-1`, name: "sandbox.whoami", arguments: {} }],
  },
  { match: { user: alert }, text: `Done with ${alert}.` },
];

describe("per-execution MCP session id", () => {
  test("two parallel agents each reach the server with their own id, and each gets its cleanup", async () => {
    const llm = await startLlm([...turn("alert-A"), ...turn("alert-B")]);
    const a = await seedExecution(env, { alertData: "alert-A" });
    const b = await seedExecution(env, { alertData: "alert-B" });
    const tools = createGatewayTools(createMcpGatewayClient(env.bus), logger);
    const deps = runnerDeps(env, llm.client, tools);
    try {
      const [doneA, doneB] = await Promise.all([
        runExecution(deps, a, new AbortController().signal),
        runExecution(deps, b, new AbortController().signal),
      ]);
      expect(doneA.status).toBe("completed");
      expect(doneB.status).toBe("completed");
    } finally {
      await llm.stop();
    }
    for (const request of [a, b]) {
      const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
      const call = timeline.find((e) => e.eventType === "llm_tool_call");
      expect(call?.content).toContain(`sandbox:${request.execution_id}`);
    }
    expect(new Set(sandbox.sessionHeaders.filter((h) => h !== null))).toEqual(
      new Set([a.execution_id, b.execution_id]),
    );
    await waitFor("both cleanups", () => (sandbox.deleted.length >= 2 ? true : undefined));
    expect([...sandbox.deleted].sort()).toEqual([a.execution_id, b.execution_id].sort());
  });

  test("a chat turn reaches the server with its own execution id, not the investigation's, and gets its own cleanup", async () => {
    const chatTurn = [
      {
        match: { user: "chat-C" },
        text: "Asking the sandbox again.",
        tool_calls: [{ id: "chat-C-1", name: "sandbox.whoami", arguments: {} }],
      },
      { match: { user: "chat-C" }, text: "Done with chat-C." },
    ];
    const llm = await startLlm([...chatTurn, ...turn("alert-C")]);
    const tools = createGatewayTools(createMcpGatewayClient(env.bus), logger);
    const deps = runnerDeps(env, llm.client, tools);
    const investigation = await seedExecution(env, { alertData: "alert-C" });
    try {
      const done = await runExecution(deps, investigation, new AbortController().signal);
      expect(done.status).toBe("completed");
      const chat = await seedExecution(env, {
        kind: "chat",
        question: "chat-C: who are you now?",
        stageName: "Chat Response",
        session: { id: investigation.session_id, stageIndex: 2 },
      });
      expect(chat.execution_id).not.toBe(investigation.execution_id);
      const answered = await runExecution(deps, chat, new AbortController().signal);
      expect(answered.status).toBe("completed");
      const calls = (await listSessionTimeline(env.db.prisma, investigation.session_id)).filter(
        (e) => e.eventType === "llm_tool_call",
      );
      // Each turn's tool call was answered for its own execution.
      expect(calls.map((e) => e.executionId === chat.execution_id)).toEqual([false, true]);
      expect(calls[0]?.content).toContain(`sandbox:${investigation.execution_id}`);
      expect(calls[1]?.content).toContain(`sandbox:${chat.execution_id}`);
      const mine = [investigation.execution_id, chat.execution_id];
      await waitFor("the chat turn's cleanup", () =>
        sandbox.deleted.includes(chat.execution_id) ? true : undefined,
      );
      expect(sandbox.deleted.filter((id) => mine.includes(id)).sort()).toEqual([...mine].sort());
    } finally {
      await llm.stop();
    }
  });
});
