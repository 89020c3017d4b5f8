/**
 * The replay MCP server through the real MCP SDK client over Streamable HTTP, as mcp-gateway
 * reaches it: the catalog's tools under their original names and schemas, recorded results by
 * argument subset, recorded errors, misses as MCP errors counted per session, and an execution
 * whose session is registered a moment after its first call.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCases } from "../src/case.ts";
import { EXECUTION_HEADER, type ReplayServer, startReplayServer } from "../src/replay-server.ts";
import { loadServerCatalog } from "../src/servers.ts";
import { CASES_DIR, CATALOG_PATH } from "./support.ts";

const catalog = loadServerCatalog(CATALOG_PATH);
const oom = loadCases(CASES_DIR).find((c) => c.id === "oom-crashloop");
const init = loadCases(CASES_DIR).find((c) => c.id === "init-container-failure");

describe("replay MCP server", () => {
  let replay: ReplayServer;
  /** execution id → session id, as the harness learns it from the API. */
  const executions = new Map<string, string>();
  const sessionCase = new Map([
    ["session-oom", oom],
    ["session-init", init],
  ]);
  const clients: Client[] = [];

  beforeAll(async () => {
    replay = await startReplayServer({
      catalog,
      recordingsOf: (sessionId) => sessionCase.get(sessionId)?.recordings,
      resolveSession: async (executionId) => executions.get(executionId),
      resolveTimeoutMs: 1_500,
    });
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await replay.close();
  });

  async function connect(executionId: string): Promise<Client> {
    const client = new Client({ name: "eval-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(replay.urlOf("kubernetes-server")), {
        requestInit: { headers: { [EXECUTION_HEADER]: executionId } },
      }),
    );
    clients.push(client);
    return client;
  }

  it("lists kubernetes-mcp-server's tools with their original schemas", async () => {
    const client = await connect("exec-list");
    const { tools } = await client.listTools();
    const podsLog = tools.find((t) => t.name === "pods_log");
    expect(podsLog?.inputSchema.required).toEqual(["name"]);
    expect(Object.keys(podsLog?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["name", "namespace", "previous", "container"]),
    );
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["pods_get", "events_list", "resources_get", "nodes_top"]),
    );
  });

  it("answers a call with the case's recording whose arguments it contains", async () => {
    executions.set("exec-oom", "session-oom");
    const client = await connect("exec-oom");
    const previous = await client.callTool({
      name: "pods_log",
      arguments: { name: "payments-api-6d8f7c9b4-k2x7p", namespace: "payments", previous: true },
    });
    expect(previous.isError).toBeFalsy();
    expect(JSON.stringify(previous.content)).toContain("GC overhead: 94%");
    const current = await client.callTool({
      name: "pods_log",
      arguments: { name: "payments-api-6d8f7c9b4-k2x7p", namespace: "payments" },
    });
    expect(JSON.stringify(current.content)).not.toContain("GC overhead");
    expect(replay.served("session-oom")).toBe(2);
    expect(replay.misses("session-oom")).toEqual([]);
  });

  it("replays a recorded tool error as an error result", async () => {
    executions.set("exec-init", "session-init");
    const client = await connect("exec-init");
    const result = await client.callTool({
      name: "pods_log",
      arguments: { name: "ledger-api-58c7d9b6f-4tq2m", namespace: "ledger" },
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("PodInitializing");
  });

  it("answers a call without a recording with an MCP error and counts the miss", async () => {
    const client = await connect("exec-oom");
    await expect(
      client.callTool({ name: "pods_get", arguments: { name: "some-other-pod" } }),
    ).rejects.toThrow(/fixture miss: no recorded result for kubernetes-server\.pods_get/);
    expect(replay.misses("session-oom")).toEqual([
      {
        server: "kubernetes-server",
        tool: "pods_get",
        arguments: { name: "some-other-pod" },
        reason: "no_recording",
      },
    ]);
    expect(replay.misses("session-init")).toEqual([]);
  });

  it("waits for a session registered after the call arrives", async () => {
    const client = await connect("exec-late");
    setTimeout(() => executions.set("exec-late", "session-init"), 400);
    const result = await client.callTool({
      name: "pods_get",
      arguments: { name: "ledger-api-58c7d9b6f-4tq2m" },
    });
    expect(JSON.stringify(result.content)).toContain("db-migrate");
  });

  it("fails a call whose execution never becomes known", async () => {
    const client = await connect("exec-unknown");
    await expect(
      client.callTool({ name: "pods_get", arguments: { name: "payments-api-6d8f7c9b4-k2x7p" } }),
    ).rejects.toThrow(/fixture miss/);
    expect(replay.misses("")).toMatchObject([{ reason: "unknown_execution" }]);
  });
});
