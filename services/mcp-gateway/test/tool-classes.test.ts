import { Writable } from "node:stream";
import type { McpExecutionScope } from "@tarsy/contracts";
import { createMcpGatewayClient, type McpGatewayClient } from "@tarsy/mcp-client";
import { createMetrics } from "@tarsy/metrics";
import { createLogger } from "@tarsy/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dummyKubeconfig,
  fixtureStdio,
  KUBERNETES_MCP_BIN,
  serverConfig,
  startTestGateway,
  type TestGateway,
} from "./helpers.ts";

/**
 * Tool classes enforced by the gateway (#30): a tool is mutating by its MCP annotations
 * (`readOnlyHint`), by `mcp_servers.<id>.tools`, or by having neither. An execution that may
 * not mutate (every agent but `type: action` ones) is never offered a mutating tool, and a call
 * to one is refused by the gateway without reaching the server; nor does any name reach a tool
 * the execution was not given. Against kubernetes-mcp-server (its own annotations, not
 * --read-only) and a fixture server whose writers are classed each way.
 */
describe("tool classes: listed and called by what the execution may do", {
  timeout: 90_000,
}, () => {
  let gw: TestGateway;
  let client: McpGatewayClient;
  const metrics = createMetrics("mcp-gateway", { processMetrics: false });
  const logged: Array<{ msg: string; level: number; server?: string; tools?: unknown }> = [];
  const logSink = () =>
    new Writable({
      write(chunk, _enc, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean))
          logged.push(JSON.parse(line));
        done();
      },
    });
  let n = 0;
  /** A fresh execution each time, so no earlier listing helps the gateway. */
  const scope = (servers: string[], extra: Partial<McpExecutionScope> = {}): McpExecutionScope => ({
    execution_id: `exec-class-${++n}`,
    servers,
    ...extra,
  });

  beforeAll(async () => {
    const kubeconfig = dummyKubeconfig("classes");
    gw = await startTestGateway(
      [
        serverConfig("kubernetes", {
          type: "stdio",
          command: KUBERNETES_MCP_BIN,
          args: ["--kubeconfig", kubeconfig],
          env: {},
        }),
        serverConfig("fixture", fixtureStdio()),
        {
          ...serverConfig("tuned", fixtureStdio()),
          tools: {
            delete_preview: { mutating: false },
            "delete_*": { mutating: true },
            "restart_*": { mutating: false },
            get_configmap: { mutating: true },
          },
        },
      ],
      {
        metrics,
        logger: createLogger({ service: "mcp-gateway", level: "info", destination: logSink() }),
      },
    );
    client = createMcpGatewayClient(gw.testBus.bus);
  }, 90_000);

  afterAll(async () => {
    await gw?.stop();
  });

  const classes = (tools: { tool: string; mutating: boolean; mutating_source: string }[]) =>
    Object.fromEntries(tools.map((t) => [t.tool, [t.mutating, t.mutating_source]]));

  it("classes every tool: from its annotations, from the config, or mutating without either", async () => {
    const cached = await client.serverTools();
    const of = (server: string) =>
      classes(cached.servers.find((s) => s.server === server)?.tools ?? []);
    const k8s = of("kubernetes");
    expect(k8s.pods_list).toEqual([false, "annotations"]);
    expect(k8s.events_list).toEqual([false, "annotations"]);
    expect(k8s.pods_delete).toEqual([true, "annotations"]);
    expect(k8s.resources_scale).toEqual([true, "annotations"]);
    expect(k8s.pods_run).toEqual([true, "annotations"]);
    expect(of("fixture")).toMatchObject({
      get_configmap: [false, "annotations"],
      restart_service: [true, "default"],
      delete_volume: [true, "annotations"],
      delete_preview: [false, "annotations"],
    });
    expect(of("tuned")).toMatchObject({
      get_configmap: [true, "config"],
      restart_service: [false, "config"],
      delete_volume: [true, "config"],
      delete_preview: [false, "config"],
      whoami: [false, "annotations"],
    });
  });

  it("at start, logs each server's classes and warns of the tools that only lack an annotation", async () => {
    const classes = logged.filter((l) => l.msg.startsWith("MCP server tool classes"));
    expect(classes.map((l) => l.server).sort()).toEqual(["fixture", "kubernetes", "tuned"]);
    expect(classes.find((l) => l.server === "fixture")).toMatchObject({
      tools: 15,
      read_only: 13,
      mutating: 2,
    });
    const unclassed = logged.filter((l) => l.msg.includes("carry no readOnlyHint"));
    // Only the fixture's restart_service: the overrides class it on "tuned", and
    // kubernetes-mcp-server annotates every tool.
    expect(unclassed).toEqual([
      expect.objectContaining({ server: "fixture", tools: ["restart_service"], level: 40 }),
    ]);
    expect(unclassed[0]?.msg).toContain("mcp_servers.fixture.tools");
  });

  it("an execution that may not mutate is offered only read-only tools", async () => {
    const listed = await client.listTools(scope(["kubernetes", "fixture", "tuned"]));
    expect(listed.failed_servers).toEqual({});
    expect(listed.tools.length).toBeGreaterThan(10);
    expect(listed.tools.filter((t) => t.mutating)).toEqual([]);
    const names = listed.tools.map((t) => t.name);
    expect(names).toContain("kubernetes.pods_list");
    expect(names).toContain("fixture.delete_preview");
    expect(names).toContain("tuned.restart_service");
    for (const hidden of [
      "kubernetes.pods_delete",
      "kubernetes.resources_create_or_update",
      "kubernetes.resources_scale",
      "kubernetes.pods_exec",
      "fixture.restart_service",
      "fixture.delete_volume",
      "tuned.get_configmap",
      "tuned.delete_volume",
    ]) {
      expect(names).not.toContain(hidden);
    }
  });

  it("an action execution is offered the mutating tools too, marked as such", async () => {
    const listed = await client.listTools(
      scope(["kubernetes", "fixture", "tuned"], { allow_mutating: true }),
    );
    const byName = classes(listed.tools.map((t) => ({ ...t, tool: t.name })));
    expect(byName["kubernetes.pods_delete"]).toEqual([true, "annotations"]);
    expect(byName["fixture.restart_service"]).toEqual([true, "default"]);
    expect(byName["tuned.get_configmap"]).toEqual([true, "config"]);
    expect(byName["kubernetes.pods_list"]).toEqual([false, "annotations"]);
  });

  it("a call to a mutating tool is refused without reaching the server, even as the execution's first request", async () => {
    const refusedBefore = await refusals();
    for (const [name, args] of [
      ["fixture.restart_service", '{"name":"web"}'],
      ["fixture.delete_volume", '{"name":"data"}'],
      ["tuned.get_configmap", ""],
      ["kubernetes.pods_delete", '{"name":"web-0","namespace":"prod"}'],
      [
        "kubernetes__resources_scale",
        '{"apiVersion":"apps/v1","kind":"Deployment","name":"web","scale":0}',
      ],
    ] as const) {
      const reply = await client.callTool(scope(["kubernetes", "fixture", "tuned"]), {
        name,
        arguments: args,
      });
      expect(reply.is_error, name).toBe(true);
      expect(reply.content, name).toContain("not allowed to run mutating tools");
      expect(reply.content, name).toContain("The call was not made");
      // What the fixture's writers answer when they run, and what the unreachable cluster does.
      expect(reply.content).not.toMatch(/restarted|deleted|connection refused|127\.0\.0\.1:1/);
    }
    expect((await refusals()) - refusedBefore).toBe(5);
  });

  it("an action execution's call to a mutating tool goes on to its approval (action-requests.test.ts)", async () => {
    for (const [server, name, args] of [
      ["fixture", "restart_service", '{"name":"web"}'],
      ["kubernetes", "pods_delete", '{"name":"web-0","namespace":"prod"}'],
    ] as const) {
      const reply = await client.callTool(scope([server], { allow_mutating: true }), {
        name: `${server}.${name}`,
        arguments: args,
      });
      expect(reply.is_error).toBe(true);
      expect(reply.content).not.toContain("not allowed to run mutating tools");
      // This gateway has no database: no approval can be checked, so the call is not made.
      expect(reply.content).toContain("DATABASE_URL is not set");
    }
  });

  it("an override makes a tool callable or not, whatever its annotations say", async () => {
    const read = scope(["tuned"]);
    expect(
      await client.callTool(read, { name: "tuned.restart_service", arguments: '{"name":"web"}' }),
    ).toMatchObject({ is_error: false, content: "restarted web" });
    expect(await client.callTool(read, { name: "tuned.delete_preview" })).toMatchObject({
      is_error: false,
      content: "would delete: nothing",
    });
    const configmap = await client.callTool(read, { name: "tuned.get_configmap" });
    expect(configmap.is_error).toBe(true);
    expect(configmap.content).toContain("not allowed to run mutating tools");
  });

  it("no name reaches a tool the execution was not given", async () => {
    const tries = [
      "fixture__restart_service",
      " fixture.restart_service ",
      "FIXTURE.restart_service",
      "fixture.Restart_Service",
      "fixture.restart-service",
      "fixture.restart_service\u200b",
      "fixture/restart_service",
      "fixture.restart_service;fixture.whoami",
      "fixture..restart_service",
      "fixture.fixture.restart_service",
      "tuned.restart_service", // another server's override does not travel: not in this scope
      "kubernetes.pods_delete",
      "everything.echo",
      "restart_service",
      "fixture.get_configmap", // filtered out for this execution
    ];
    for (const name of tries) {
      const reply = await client.callTool(
        scope(["fixture"], { tool_filters: { fixture: ["whoami", "restart_service"] } }),
        { name, arguments: '{"name":"web"}' },
      );
      expect(reply.is_error, JSON.stringify(name)).toBe(true);
      expect(reply.content, JSON.stringify(name)).not.toMatch(/restarted|"data"/);
    }
    // The filter's own tools still answer.
    const whoami = await client.callTool(
      scope(["fixture"], { tool_filters: { fixture: ["whoami", "restart_service"] } }),
      { name: "fixture.whoami" },
    );
    expect(whoami.is_error).toBe(false);
  });

  /** The gateway's count of calls it refused as not permitted. */
  async function refusals(): Promise<number> {
    const values = (await metrics.mcpErrors.get()).values;
    return values
      .filter((v) => v.labels.code === "not_permitted")
      .reduce((sum, v) => sum + v.value, 0);
  }
});
