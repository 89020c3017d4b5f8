import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dummyKubeconfig,
  everythingStdio,
  httpTransport,
  KUBERNETES_MCP_BIN,
  serverConfig,
  startEverythingHttp,
  startTestGateway,
  type TestGateway,
} from "./helpers.ts";

describe("server-everything over stdio, Streamable HTTP and SSE; kubernetes-mcp-server", {
  timeout: 90_000,
}, () => {
  let gw: TestGateway;
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    const http = await startEverythingHttp("streamableHttp");
    const sse = await startEverythingHttp("sse");
    stops.push(http.stop, sse.stop);
    const kubeconfig = dummyKubeconfig("transports");
    gw = await startTestGateway([
      serverConfig("everything-stdio", everythingStdio()),
      serverConfig("everything-http", httpTransport("http", http.url)),
      serverConfig("everything-sse", httpTransport("sse", sse.url)),
      serverConfig("kubernetes", {
        type: "stdio",
        command: KUBERNETES_MCP_BIN,
        args: ["--read-only", "--kubeconfig", kubeconfig],
        env: {},
      }),
    ]);
  }, 90_000);

  afterAll(async () => {
    await gw?.stop();
    for (const stop of stops) await stop();
  });

  it("is ready once every configured server initialized, with cached tools per server", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const health = await client.health();
    expect(health.ready).toBe(true);
    expect(health.not_ready_reason).toBeUndefined();
    expect(health.servers.map((s) => [s.server, s.healthy])).toEqual(
      expect.arrayContaining([
        ["everything-stdio", true],
        ["everything-http", true],
        ["everything-sse", true],
        ["kubernetes", true],
      ]),
    );
    const cached = await client.serverTools();
    const everything = cached.servers.find((s) => s.server === "everything-http");
    expect(everything?.tools.map((t) => t.name)).toContain("everything-http.echo");
  });

  for (const server of ["everything-stdio", "everything-http", "everything-sse"]) {
    it(`lists and calls tools over ${server}`, async () => {
      const client = createMcpGatewayClient(gw.testBus.bus);
      const scope = { execution_id: `exec-${server}`, servers: [server] };
      const listed = await client.listTools(scope);
      expect(listed.failed_servers).toEqual({});
      expect(listed.tools.length).toBeGreaterThanOrEqual(5);
      const echo = listed.tools.find((t) => t.name === `${server}.echo`);
      expect(echo?.input_schema).toMatchObject({ type: "object" });

      // ReAct style: server.tool with a key-value ActionInput.
      const react = await client.callTool(scope, {
        name: `${server}.echo`,
        arguments: "message: hello over the wire",
      });
      expect(react.is_error).toBe(false);
      expect(react.content).toContain("hello over the wire");
      expect(react.arguments).toEqual({ message: "hello over the wire" });

      // Function-calling style: server__tool with JSON arguments.
      const native = await client.callTool(scope, {
        name: `${server.replace(".", "_")}__echo`,
        arguments: '{"message":"native call"}',
      });
      expect(native.is_error).toBe(false);
      expect(native.content).toContain("native call");
      await client.release(scope.execution_id);
    });
  }

  it("turns every tool-level problem into isError content", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const scope = {
      execution_id: "exec-problems",
      servers: ["everything-stdio"],
      tool_filters: { "everything-stdio": ["echo"] },
    };
    const listed = await client.listTools(scope);
    expect(listed.tools.map((t) => t.name)).toEqual(["everything-stdio.echo"]);

    const cases = [
      { name: "not a tool name", expected: /server\.tool' format/ },
      { name: "kubernetes.pods_list", expected: /not available for this execution/ },
      { name: "everything-stdio.get-sum", expected: /not available on server "everything-stdio"/ },
      { name: "missing-server.echo", expected: /Available servers: everything-stdio/ },
    ];
    for (const c of cases) {
      const reply = await client.callTool(scope, { name: c.name, arguments: "{}" });
      expect(reply.is_error, c.name).toBe(true);
      expect(reply.content, c.name).toMatch(c.expected);
    }
    // Bad arguments: the server rejects them; the gateway reports it as content.
    const bad = await client.callTool(scope, {
      name: "everything-stdio.echo",
      arguments: '{"nope": 1}',
    });
    expect(bad.is_error).toBe(true);
    expect(bad.content.length).toBeGreaterThan(0);

    const unknown = await client.callTool(
      { execution_id: "exec-unknown-tool", servers: ["everything-stdio"] },
      { name: "everything-stdio.no_such_tool" },
    );
    await client.listTools({ execution_id: "exec-unknown-tool", servers: ["everything-stdio"] });
    const unknownAfterList = await client.callTool(
      { execution_id: "exec-unknown-tool", servers: ["everything-stdio"] },
      { name: "everything-stdio.no_such_tool" },
    );
    expect(unknown.is_error).toBe(true);
    expect(unknownAfterList.is_error).toBe(true);
    expect(unknownAfterList.content).toMatch(/not found on server "everything-stdio"/);
    await client.release("exec-problems");
    await client.release("exec-unknown-tool");
  });

  it("kubernetes-mcp-server with a dummy kubeconfig: tools listed, calls fail as isError content", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const scope = { execution_id: "exec-k8s", servers: ["kubernetes"] };
    const listed = await client.listTools(scope);
    expect(listed.failed_servers).toEqual({});
    const names = listed.tools.map((t) => t.tool);
    expect(names).toContain("pods_list");
    const reply = await client.callTool(scope, { name: "kubernetes.pods_list", arguments: "" });
    expect(reply.is_error).toBe(true);
    expect(reply.content.length).toBeGreaterThan(0);
    const ns = await client.callTool(scope, {
      name: "kubernetes__pods_list_in_namespace",
      arguments: "namespace: default",
    });
    expect(ns.is_error).toBe(true);
    expect(ns.arguments).toEqual({ namespace: "default" });
    await client.release("exec-k8s");
  });
});
