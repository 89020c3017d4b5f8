import {
  actionAudit,
  createSession,
  decideAction,
  ensureStage,
  getAction,
  requestAction,
  startExecution,
} from "@tarsy/db";
import { createMcpGatewayClient, type McpGatewayClient } from "@tarsy/mcp-client";
import { createTestDb, type TestDb } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureStdio, serverConfig, startTestGateway, type TestGateway } from "./helpers.ts";

/**
 * The gateway's side of approvals (#30): an action execution's mutating call runs only with
 * an approved action request of this very call (execution, tool, arguments), claimed once:
 * the same approval never sends the call twice, and without a database no mutating call runs.
 * Against the fixture server, whose restart_service carries no annotation (so is mutating).
 */
describe("action requests: a mutating call runs once, and only approved", {
  timeout: 90_000,
}, () => {
  let test: TestDb;
  let gw: TestGateway;
  let noDb: TestGateway;
  let client: McpGatewayClient;
  let executionId = "";
  let sessionId = "";

  beforeAll(async () => {
    test = await createTestDb();
    const { prisma } = test.db;
    const { session } = await createSession(prisma, {
      project: "default",
      alertData: "restart web",
      alertType: "kubernetes",
      chainId: "k8s-chain",
      author: "tester",
    });
    sessionId = session.id;
    const { executions } = await ensureStage(
      prisma,
      { sessionId, stageName: "remediate", stageIndex: 1 },
      [{ agentName: "Remediator", agentIndex: 1 }],
    );
    executionId = executions[0]?.id ?? "";
    await startExecution(prisma, executionId, "runner-1");
    gw = await startTestGateway([serverConfig("fixture", fixtureStdio())], {
      db: test.db,
      replicaId: "gw-a",
    });
    // A gateway of its own (its own subjects), without a database.
    noDb = await startTestGateway([serverConfig("fixture", fixtureStdio())], {
      replicaId: "gw-nodb",
    });
    client = createMcpGatewayClient(gw.testBus.bus);
  }, 90_000);

  afterAll(async () => {
    await noDb?.stop();
    await gw?.stop();
    await test?.cleanup();
  });

  const scope = () => ({
    execution_id: executionId,
    session_id: sessionId,
    servers: ["fixture"],
    allow_mutating: true,
  });

  /** A request for `restart_service {name}` with the given call id, decided as asked. */
  const request = async (callId: string, name: string, decision?: "approved" | "denied") => {
    const { action } = await requestAction(test.db.prisma, {
      sessionId,
      stageId: null,
      executionId,
      agentName: "Remediator",
      toolCallId: callId,
      server: "fixture",
      tool: "restart_service",
      rawArguments: JSON.stringify({ name }),
      arguments: { name },
      reason: "restart it",
      approvalMode: "required",
      expiresAt: new Date(Date.now() + 600_000),
      at: new Date(),
    });
    if (decision) {
      await decideAction(test.db.prisma, action.id, {
        status: decision,
        actor: "alice",
        at: new Date(),
      });
    }
    return action.id;
  };

  const call = (name: string, approvalId?: string) =>
    client.callTool(scope(), {
      name: "fixture.restart_service",
      arguments: JSON.stringify({ name }),
      ...(approvalId ? { approvalId } : {}),
    });

  it("an approved call runs once; the same approval never sends it again", async () => {
    const id = await request("c-once", "web", "approved");
    const first = await call("web", id);
    expect(first).toMatchObject({ is_error: false, content: "restarted web" });
    const stored = await getAction(test.db.prisma, id);
    expect(stored).toMatchObject({
      callStatus: "succeeded",
      result: "restarted web",
      calledBy: "gw-a",
    });
    const second = await call("web", id);
    expect(second.is_error).toBe(true);
    expect(second.content).toContain("already sent once");
    expect(second.content).not.toContain("restarted web");
    expect((await actionAudit(test.db.prisma, id)).map((e) => e.event)).toEqual([
      "requested",
      "approved",
      "call_started",
      "call_succeeded",
    ]);
  });

  it("refuses a mutating call without an approval, with a pending or denied one, or with another call's", async () => {
    const missing = await call("web");
    expect(missing.is_error).toBe(true);
    expect(missing.content).toContain("carried none");

    const pending = await request("c-pending", "web");
    expect((await call("web", pending)).content).toContain("is not approved");
    const denied = await request("c-denied", "web", "denied");
    expect((await call("web", denied)).content).toContain("is not approved");

    // Approved for "db", called for "web": refused, and the approval stays unused.
    const other = await request("c-other", "db", "approved");
    expect((await call("web", other)).content).toContain("was for another call");
    expect(await getAction(test.db.prisma, other)).toMatchObject({ callStatus: "not_started" });
    for (const id of [pending, denied, other]) {
      expect((await actionAudit(test.db.prisma, id)).map((e) => e.event)).not.toContain(
        "call_started",
      );
    }
  });

  it("a dry run runs the configured form, never the call, and needs no approval", async () => {
    const config = serverConfig("fixture", fixtureStdio());
    const dry = await startTestGateway(
      [
        {
          ...config,
          tools: {
            restart_service: {
              mutating: true,
              dry_run: { tool: "echo_args", arguments: { dryRun: "All" } },
            },
            delete_volume: { mutating: true },
          },
        },
      ],
      { db: test.db, replicaId: "gw-dry" },
    );
    try {
      const dryClient = createMcpGatewayClient(dry.testBus.bus);
      const listed = await dryClient.listTools(scope());
      const byName = new Map(listed.tools.map((t) => [t.tool, t]));
      expect(byName.get("restart_service")).toMatchObject({ mutating: true, dry_run: true });
      expect(byName.get("delete_volume")).toMatchObject({ mutating: true, dry_run: false });

      const reply = await dryClient.callTool(scope(), {
        name: "fixture.restart_service",
        arguments: '{"name":"web"}',
        dryRun: true,
      });
      // echo_args answered with the call's arguments and the form's over them.
      expect(reply).toMatchObject({ is_error: false, source: "server", tool: "echo_args" });
      expect(JSON.parse(reply.content)).toEqual({ name: "web", dryRun: "All" });

      const none = await dryClient.callTool(scope(), {
        name: "fixture.delete_volume",
        arguments: '{"name":"data"}',
        dryRun: true,
      });
      expect(none).toMatchObject({ is_error: true, source: "gateway" });
      expect(none.content).toBe('tool "delete_volume" of server "fixture" has no dry-run form');
      // An execution that may not mutate gets no dry run either.
      const refused = await dryClient.callTool(
        { ...scope(), allow_mutating: false },
        { name: "fixture.restart_service", arguments: '{"name":"web"}', dryRun: true },
      );
      expect(refused).toMatchObject({ is_error: true, source: "gateway" });
      expect(refused.content).toContain("mutating");
    } finally {
      await dry.stop();
    }
  });

  it("without a database, no mutating call runs", async () => {
    const id = await request("c-nodb", "web", "approved");
    const reply = await createMcpGatewayClient(noDb.testBus.bus).callTool(scope(), {
      name: "fixture.restart_service",
      arguments: '{"name":"web"}',
      approvalId: id,
    });
    expect(reply.replica.id).toBe("gw-nodb");
    expect(reply.is_error).toBe(true);
    expect(reply.content).toContain("DATABASE_URL is not set");
    expect(await getAction(test.db.prisma, id)).toMatchObject({ callStatus: "not_started" });
  });
});
