import type { McpServerConfig } from "@tarsy/config";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import {
  callerTag,
  type FakeSts,
  type RecordingMcpServer,
  startFakeSts,
  startRecordingMcpServer,
} from "@tarsy/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { httpTransport, serverConfig, startTestGateway, type TestGateway } from "./helpers.ts";

const SHARED = "shared-service-account-token";
const ALICE = "alice-user-token-4f1d";
const BOB = "bob-user-token-9c2e";
const STS_SECRET = "sts-client-secret-77";

/** session id → the user token the gateway finds for it (what Postgres holds in production). */
const userTokens = new Map<string, string>([
  ["sess-alice", ALICE],
  ["sess-bob", BOB],
]);

function perUser(
  id: string,
  server: RecordingMcpServer,
  auth: McpServerConfig["auth"],
  kind: "http" | "sse" = "http",
): McpServerConfig {
  return {
    ...serverConfig(id, httpTransport(kind, server.url, { bearer_token: SHARED })),
    auth,
  };
}

describe("per-user tool credentials (forward_user_token, token_exchange, fallback)", {
  timeout: 60_000,
}, () => {
  let gw: TestGateway;
  let sts: FakeSts;
  let failingSts: FakeSts;
  const mcp: Record<string, RecordingMcpServer> = {};
  const exchange = (url: string) => ({
    sts_url: url,
    client_id: "tarsy-gateway",
    client_secret_env: "TEST_STS_SECRET",
    audience: "mcp-k8s",
    scopes: ["k8s.read", "k8s.logs"],
  });

  beforeAll(async () => {
    sts = await startFakeSts();
    failingSts = await startFakeSts();
    failingSts.failWith(400, "invalid_grant");
    for (const [id, kind] of [
      ["forward", "http"],
      ["forward-sse", "sse"],
      ["exchange", "http"],
      ["exchange-sse", "sse"],
      ["strict", "http"],
      ["lenient", "http"],
      ["sts-down", "http"],
      ["plain", "http"],
    ] as const) {
      mcp[id] = await startRecordingMcpServer(kind);
    }
    const need = (id: string) => mcp[id] as RecordingMcpServer;
    gw = await startTestGateway(
      [
        perUser("forward", need("forward"), {
          mode: "forward_user_token",
          fallback_to_shared: false,
        }),
        perUser(
          "forward-sse",
          need("forward-sse"),
          { mode: "forward_user_token", fallback_to_shared: false },
          "sse",
        ),
        perUser("exchange", need("exchange"), {
          mode: "token_exchange",
          fallback_to_shared: false,
          token_exchange: exchange(sts.url),
        }),
        perUser(
          "exchange-sse",
          need("exchange-sse"),
          { mode: "token_exchange", fallback_to_shared: false, token_exchange: exchange(sts.url) },
          "sse",
        ),
        perUser("strict", need("strict"), {
          mode: "forward_user_token",
          fallback_to_shared: false,
        }),
        perUser("lenient", need("lenient"), {
          mode: "forward_user_token",
          fallback_to_shared: true,
        }),
        perUser("sts-down", need("sts-down"), {
          mode: "token_exchange",
          fallback_to_shared: false,
          token_exchange: exchange(failingSts.url),
        }),
        perUser("plain", need("plain"), { mode: "shared", fallback_to_shared: false }),
      ],
      {
        userTokens: async (scope) =>
          scope.sessionId ? userTokens.get(scope.sessionId) : undefined,
        inheritedEnv: { TEST_STS_SECRET: STS_SECRET },
      },
    );
  });

  // The health monitor's own start-up checks are the gateway's business; from here on, every
  // request a server receives comes from an execution.
  beforeEach(() => {
    for (const server of Object.values(mcp)) server.requests.length = 0;
  });

  afterAll(async () => {
    await gw?.stop();
    for (const server of Object.values(mcp)) await server.close();
    await sts?.close();
    await failingSts?.close();
  });

  const client = () => createMcpGatewayClient(gw.testBus.bus);

  it("forwards each user's own token, per call, over Streamable HTTP and SSE", async () => {
    const servers = ["forward", "forward-sse"];
    const alice = { execution_id: "exec-fwd-alice", session_id: "sess-alice", servers };
    const bob = { execution_id: "exec-fwd-bob", session_id: "sess-bob", servers };
    const calls = await Promise.all(
      [alice, bob, alice, bob].flatMap((scope) =>
        servers.map(async (server) => ({
          scope,
          reply: await client().callTool(scope, { name: `${server}.whoami`, arguments: "{}" }),
        })),
      ),
    );
    for (const { scope, reply } of calls) {
      expect(reply.is_error).toBe(false);
      const token = scope === alice ? ALICE : BOB;
      expect(reply.content).toBe(callerTag(`Bearer ${token}`));
    }
    for (const id of servers) {
      const bearers = (mcp[id] as RecordingMcpServer).toolCallBearers();
      expect(bearers.sort()).toEqual(
        [`Bearer ${ALICE}`, `Bearer ${ALICE}`, `Bearer ${BOB}`, `Bearer ${BOB}`].sort(),
      );
      const every = (mcp[id] as RecordingMcpServer).requests.map((r) => r.authorization);
      expect(every).not.toContain(`Bearer ${SHARED}`);
      expect(every.every((a) => a === `Bearer ${ALICE}` || a === `Bearer ${BOB}`)).toBe(true);
    }
    await Promise.all([client().release(alice.execution_id), client().release(bob.execution_id)]);
  });

  it("exchanges the user's token at the STS (RFC 8693) lazily, once per server and token", async () => {
    sts.requests.length = 0;
    const scope = {
      execution_id: "exec-xchg-alice",
      session_id: "sess-alice",
      servers: ["exchange", "exchange-sse"],
    };
    // Opening the execution with a server it does not call yet exchanges nothing.
    await client().listTools({ ...scope, servers: ["plain"] });
    expect(sts.requests).toHaveLength(0);

    for (let i = 0; i < 3; i++) {
      const reply = await client().callTool(scope, { name: "exchange.whoami", arguments: "{}" });
      expect(reply.is_error).toBe(false);
      expect(reply.content).toBe(callerTag(`Bearer exchanged:${ALICE}`));
    }
    expect(sts.requests).toHaveLength(1);
    const sse = await client().callTool(scope, { name: "exchange-sse.whoami", arguments: "{}" });
    expect(sse.content).toBe(callerTag(`Bearer exchanged:${ALICE}`));
    expect(sts.requests).toHaveLength(2);

    const [first] = sts.requests;
    expect(first?.contentType).toBe("application/x-www-form-urlencoded");
    expect(first?.authorization).toBe(
      `Basic ${Buffer.from(`tarsy-gateway:${STS_SECRET}`).toString("base64")}`,
    );
    expect(first?.form).toEqual({
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      subject_token: ALICE,
      subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
      requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
      audience: "mcp-k8s",
      scope: "k8s.read k8s.logs",
    });
    for (const id of ["exchange", "exchange-sse"]) {
      const seen = (mcp[id] as RecordingMcpServer).requests.map((r) => r.authorization);
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((a) => a === `Bearer exchanged:${ALICE}`)).toBe(true);
    }
    await client().release(scope.execution_id);
  });

  it("fails closed without a user token unless fallback_to_shared is set", async () => {
    const scope = {
      execution_id: "exec-no-user",
      session_id: "sess-from-alertmanager",
      servers: ["strict", "lenient", "exchange"],
    };
    const listed = await client().listTools(scope);
    expect(listed.failed_servers.strict).toBe(
      "per-user credentials required for server strict; none available",
    );
    expect(listed.failed_servers.exchange).toBe(
      "per-user credentials required for server exchange; none available",
    );
    expect(listed.tools.map((t) => t.name)).toEqual(["lenient.whoami"]);

    const strict = await client().callTool(scope, { name: "strict.whoami", arguments: "{}" });
    expect(strict.is_error).toBe(true);
    expect(strict.content).toContain(
      "per-user credentials required for server strict; none available",
    );
    expect((mcp.strict as RecordingMcpServer).requests).toEqual([]);
    expect((mcp.exchange as RecordingMcpServer).requests).toEqual([]);

    const lenient = await client().callTool(scope, { name: "lenient.whoami", arguments: "{}" });
    expect(lenient.is_error).toBe(false);
    expect(lenient.content).toBe(callerTag(`Bearer ${SHARED}`));
    expect((mcp.lenient as RecordingMcpServer).toolCallBearers()).toEqual([`Bearer ${SHARED}`]);
    await client().release(scope.execution_id);
  });

  it("fails the call with a clear error, without the token, when the STS refuses", async () => {
    const scope = { execution_id: "exec-sts-down", session_id: "sess-bob", servers: ["sts-down"] };
    const reply = await client().callTool(scope, { name: "sts-down.whoami", arguments: "{}" });
    expect(reply.is_error).toBe(true);
    expect(reply.content).toContain(
      "token exchange for server sts-down failed: the STS answered HTTP 400 (invalid_grant)",
    );
    expect(reply.content).not.toContain(BOB);
    expect(failingSts.requests.at(-1)?.form.subject_token).toBe(BOB);
    expect((mcp["sts-down"] as RecordingMcpServer).requests).toEqual([]);
    await client().release(scope.execution_id);
  });

  it("leaves servers in shared mode on their shared credentials", async () => {
    const scope = { execution_id: "exec-plain", session_id: "sess-alice", servers: ["plain"] };
    const reply = await client().callTool(scope, { name: "plain.whoami", arguments: "{}" });
    expect(reply.content).toBe(callerTag(`Bearer ${SHARED}`));
    expect((mcp.plain as RecordingMcpServer).requests.map((r) => r.authorization)).not.toContain(
      `Bearer ${ALICE}`,
    );
    await client().release(scope.execution_id);
  });
});
