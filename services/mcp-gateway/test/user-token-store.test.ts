import { randomBytes } from "node:crypto";
import { createTokenSeal } from "@tarsy/authz";
import type { McpServerConfig } from "@tarsy/config";
import { createSession, ensureStage } from "@tarsy/db";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import {
  callerTag,
  createTestDb,
  type RecordingMcpServer,
  startRecordingMcpServer,
  type TestDb,
} from "@tarsy/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { UserTokenLookup } from "../src/auth/credentials.ts";
import { createStoredUserTokens } from "../src/auth/user-token-store.ts";
import type { ExecutionScope } from "../src/client/execution-registry.ts";
import {
  httpTransport,
  serverConfig,
  startTestGateway,
  type TestGateway,
  testLogger,
} from "./helpers.ts";

/**
 * The gateway's user token store: the submitting user's token, sealed on the session row by
 * ingest-api with TARSY_TOKEN_KEY, opened at call time with the gateway's key. With the key
 * missing or rotated the token cannot be opened, and per-user servers fail the call closed:
 * a clear tool error, no request to the server, never the shared token instead.
 */

const SHARED = "shared-service-account-token";
const USER = "carol-user-token-51aa";
const key = () => randomBytes(32);

describe("the stored user token store", { timeout: 60_000 }, () => {
  let testDb: TestDb;
  let mcp: RecordingMcpServer;
  let scope: { execution_id: string; session_id: string; servers: string[] };
  /** The same execution as the gateway's registry hands it to the store. */
  let lookup: ExecutionScope;
  const sealedWith = key();

  beforeAll(async () => {
    testDb = await createTestDb();
    mcp = await startRecordingMcpServer("http");
    const { session } = await createSession(testDb.db.prisma, {
      alertData: "{}",
      alertType: "kubernetes",
      chainId: "k8s-chain",
      project: "default",
      userToken: {
        sealed: createTokenSeal(sealedWith).seal(USER),
        expiresAt: new Date(Date.now() + 600_000),
      },
    });
    const { executions } = await ensureStage(
      testDb.db.prisma,
      { sessionId: session.id, stageName: "investigate", stageIndex: 1 },
      [{ agentName: "KubernetesAgent", agentIndex: 1, backend: "google-native", llmProvider: "g" }],
    );
    const execution = executions[0];
    if (!execution) throw new Error("no execution");
    scope = { execution_id: execution.id, session_id: session.id, servers: ["strict"] };
    lookup = {
      executionId: execution.id,
      sessionId: session.id,
      servers: ["strict"],
      toolFilters: {},
      allowMutating: false,
    };
  });
  beforeEach(() => {
    mcp.requests.length = 0;
  });
  afterAll(async () => {
    await mcp?.close();
    await testDb?.cleanup();
  });

  const strict = (): McpServerConfig => ({
    ...serverConfig("strict", httpTransport("http", mcp.url, { bearer_token: SHARED })),
    auth: { mode: "forward_user_token", fallback_to_shared: false },
  });

  /** One tool call through a gateway whose store is `userTokens` (none: no key configured). */
  async function callWith(userTokens: UserTokenLookup | undefined) {
    const gw: TestGateway = await startTestGateway([strict()], userTokens ? { userTokens } : {});
    try {
      mcp.requests.length = 0;
      const client = createMcpGatewayClient(gw.testBus.bus);
      const reply = await client.callTool(scope, { name: "strict.whoami", arguments: "{}" });
      await client.release(scope.execution_id);
      return reply;
    } finally {
      await gw.stop();
    }
  }

  it("opens the token with the key it was sealed with, and the server receives it", async () => {
    const store = createStoredUserTokens(
      testDb.db.prisma,
      createTokenSeal(sealedWith),
      testLogger(),
    );
    expect(await store(lookup)).toBe(USER);
    const reply = await callWith(store);
    expect(reply.is_error).toBe(false);
    expect(reply.content).toBe(callerTag(`Bearer ${USER}`));
    expect(mcp.toolCallBearers()).toEqual([`Bearer ${USER}`]);
  });

  it("with a rotated TARSY_TOKEN_KEY, fails the call closed: a clear error, nothing sent, no shared token", async () => {
    const rotated = createStoredUserTokens(testDb.db.prisma, createTokenSeal(key()), testLogger());
    expect(await rotated(lookup)).toBeUndefined();
    const reply = await callWith(rotated);
    expect(reply.is_error).toBe(true);
    expect(reply.content).toContain(
      "per-user credentials required for server strict; none available",
    );
    expect(reply.content).not.toContain(SHARED);
    expect(mcp.toolCallBearers()).toEqual([]);
  });

  it("with no TARSY_TOKEN_KEY (no store), fails the call closed the same way", async () => {
    const reply = await callWith(undefined);
    expect(reply.is_error).toBe(true);
    expect(reply.content).toContain(
      "per-user credentials required for server strict; none available",
    );
    expect(mcp.toolCallBearers()).toEqual([]);
  });
});
