import { describe, expect, it } from "vitest";
import { normalizeToolName, routeToolCall, splitToolName } from "./router.ts";

describe("normalizeToolName", () => {
  const table: Array<[string, string]> = [
    ["kubernetes-server__get_pods", "kubernetes-server.get_pods"],
    ["kubernetes-server.get_pods", "kubernetes-server.get_pods"],
    ["srv__tool__with__underscores", "srv.tool__with__underscores"],
    ["srv.tool__x", "srv.tool__x"],
    ["  padded__name ", "padded.name"],
  ];
  for (const [input, expected] of table) {
    it(`${input} → ${expected}`, () => expect(normalizeToolName(input)).toBe(expected));
  }
});

describe("splitToolName (strict)", () => {
  const valid: Array<[string, string, string]> = [
    ["kubernetes-server.get_pods", "kubernetes-server", "get_pods"],
    ["a.b", "a", "b"],
    ["srv_1.tool-2", "srv_1", "tool-2"],
  ];
  for (const [name, server, tool] of valid) {
    it(`accepts ${name}`, () =>
      expect(splitToolName(name)).toEqual({ ok: true, ref: { server, tool } }));
  }
  const invalid = [
    "get_pods",
    "a.b.c",
    ".tool",
    "server.",
    "-srv.tool",
    "srv.-tool",
    "srv tool.x",
    "srv.to ol",
    "",
  ];
  for (const name of invalid) {
    it(`rejects ${JSON.stringify(name)}`, () => {
      const result = splitToolName(name);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).toContain("'server.tool' format");
    });
  }
});

describe("routeToolCall: allowed servers and tool filters", () => {
  const scope = {
    servers: ["kubernetes-server", "argocd"],
    toolFilters: { "kubernetes-server": ["pods_list", "pods_log"], argocd: [] },
  };
  const table: Array<{
    name: string;
    ok: boolean;
    message?: RegExp;
    server?: string;
    tool?: string;
  }> = [
    {
      name: "kubernetes-server.pods_list",
      ok: true,
      server: "kubernetes-server",
      tool: "pods_list",
    },
    {
      name: "kubernetes-server__pods_log",
      ok: true,
      server: "kubernetes-server",
      tool: "pods_log",
    },
    { name: "argocd.anything", ok: true, server: "argocd", tool: "anything" },
    {
      name: "kubernetes-server.secrets_get",
      ok: false,
      message:
        /tool "secrets_get" is not available on server "kubernetes-server"\. Available tools: pods_list, pods_log/,
    },
    {
      name: "prometheus.query",
      ok: false,
      message:
        /MCP server "prometheus" is not available for this execution\. Available servers: kubernetes-server, argocd/,
    },
    { name: "pods_list", ok: false, message: /'server\.tool' format/ },
  ];
  for (const row of table) {
    it(row.name, () => {
      const result = routeToolCall(row.name, scope);
      expect(result.ok).toBe(row.ok);
      if (result.ok) expect(result.ref).toEqual({ server: row.server, tool: row.tool });
      else expect(result.message).toMatch(row.message as RegExp);
    });
  }
  it("an execution without servers says so", () => {
    const result = routeToolCall("a.b", { servers: [], toolFilters: {} });
    expect(result).toEqual({
      ok: false,
      message: 'MCP server "a" is not available for this execution. Available servers: (none)',
    });
  });
});
