/**
 * Tool classes (#30): `mcp_servers.<id>.tools` overrides over a server's MCP annotations, and
 * the class of a tool that has neither.
 */
import { describe, expect, it } from "vitest";
import { classifyTool, configView, dryRunOf } from "../src/index.ts";
import { load, loadIssues } from "./helpers.ts";

const SERVERS = `
mcp_servers:
  cluster:
    transport: { type: stdio, command: "true" }
    tools:
      delete_preview: { mutating: false }
      "delete_*": { mutating: true }
      "restart_*": { mutating: false }
      get_configmap: { mutating: true }
  plain:
    transport: { type: stdio, command: "true" }
`;

describe("mcp_servers.<id>.tools and the class of each tool", () => {
  const { config } = load({ tarsy: SERVERS });
  const cluster = config.mcpServers.get("cluster");
  const plain = config.mcpServers.get("plain");

  it("reads the overrides as written, in order; a server without them has none", () => {
    expect(cluster?.tools).toEqual({
      delete_preview: { mutating: false },
      "delete_*": { mutating: true },
      "restart_*": { mutating: false },
      get_configmap: { mutating: true },
    });
    expect(Object.keys(cluster?.tools ?? {})).toEqual([
      "delete_preview",
      "delete_*",
      "restart_*",
      "get_configmap",
    ]);
    expect(plain?.tools).toBeUndefined();
  });

  it("without an override: readOnlyHint decides; a tool with no readOnlyHint counts as mutating", () => {
    const server = plain ?? {};
    expect(classifyTool(server, "pods_list", { readOnlyHint: true })).toEqual({
      mutating: false,
      source: "annotations",
    });
    expect(
      classifyTool(server, "pods_delete", { readOnlyHint: false, destructiveHint: true }),
    ).toEqual({ mutating: true, source: "annotations" });
    // The MCP defaults: readOnlyHint false, destructiveHint true.
    expect(classifyTool(server, "restart", undefined)).toEqual({
      mutating: true,
      source: "default",
    });
    expect(classifyTool(server, "restart", { destructiveHint: false })).toEqual({
      mutating: true,
      source: "default",
    });
    expect(classifyTool(server, "restart", { idempotentHint: true })).toEqual({
      mutating: true,
      source: "default",
    });
  });

  it("an override wins over the annotations: the exact name first, else the first matching glob", () => {
    const server = cluster ?? {};
    // Exact beats the glob written after it, whatever the annotation says.
    expect(classifyTool(server, "delete_preview", { readOnlyHint: false })).toEqual({
      mutating: false,
      source: "config",
    });
    expect(classifyTool(server, "delete_volume", { readOnlyHint: true })).toEqual({
      mutating: true,
      source: "config",
    });
    expect(classifyTool(server, "restart_service", undefined)).toEqual({
      mutating: false,
      source: "config",
    });
    expect(classifyTool(server, "get_configmap", { readOnlyHint: true })).toEqual({
      mutating: true,
      source: "config",
    });
    // A glob matches whole names only; case counts.
    expect(classifyTool(server, "force_restart_service", undefined).source).toBe("default");
    expect(classifyTool(server, "Restart_service", undefined)).toEqual({
      mutating: true,
      source: "default",
    });
    // A name that merely looks like a glob key is not one.
    expect(classifyTool({ tools: { "get_*": { mutating: false } } }, "get_*x", undefined)).toEqual({
      mutating: false,
      source: "config",
    });
  });

  it("the configuration view lists the overrides of each server", () => {
    const view = configView(config);
    expect(view.mcp_servers.find((s) => s.id === "cluster")?.tool_classes).toEqual([
      { pattern: "delete_preview", mutating: false },
      { pattern: "delete_*", mutating: true },
      { pattern: "restart_*", mutating: false },
      { pattern: "get_configmap", mutating: true },
    ]);
    expect(view.mcp_servers.find((s) => s.id === "plain")?.tool_classes).toEqual([]);
  });

  it("a class that is not { mutating: boolean } is an error at its path; another key is ignored, said", () => {
    const issues = loadIssues({
      tarsy: `
mcp_servers:
  cluster:
    transport: { type: stdio, command: "true" }
    tools:
      restart: { mutating: "yes" }
      scale: {}
`,
    });
    expect(issues).toEqual([
      expect.objectContaining({
        path: "mcp_servers.cluster.tools.restart.mutating",
        message: "expected boolean, received string",
      }),
      expect.objectContaining({
        path: "mcp_servers.cluster.tools.scale.mutating",
        message: "is required",
      }),
    ]);
    const { config: withExtra, warnings } = load({
      tarsy: SERVERS.replace(
        '"restart_*": { mutating: false }',
        '"restart_*": { mutating: false, approval: none }',
      ),
    });
    expect(withExtra.mcpServers.get("cluster")?.tools?.["restart_*"]).toEqual({ mutating: false });
    expect(warnings).toContainEqual(
      expect.objectContaining({
        path: "mcp_servers.cluster.tools.restart_*.approval",
        message: '"approval" is not a known setting; ignored',
      }),
    );
  });

  it("dry_run: the form run when a mutating call's approval is asked (its own tool unless named); only for mutating tools", () => {
    const { config: withDryRun } = load({
      tarsy: `
mcp_servers:
  k8s:
    transport: { type: stdio, command: "true" }
    tools:
      resources_delete: { mutating: true, dry_run: { arguments: { dryRun: All } } }
      "scale_*": { mutating: true, dry_run: { tool: scale_preview, arguments: { preview: true } } }
      restart: { mutating: true }
`,
    });
    const k8s = withDryRun.mcpServers.get("k8s") ?? {};
    expect(dryRunOf(k8s, "resources_delete")).toEqual({
      tool: "resources_delete",
      arguments: { dryRun: "All" },
    });
    expect(dryRunOf(k8s, "scale_deployment")).toEqual({
      tool: "scale_preview",
      arguments: { preview: true },
    });
    expect(dryRunOf(k8s, "restart")).toBeUndefined();
    expect(dryRunOf(k8s, "pods_list")).toBeUndefined();
    const issues = loadIssues({
      tarsy: `
mcp_servers:
  cluster:
    transport: { type: stdio, command: "true" }
    tools:
      peek: { mutating: false, dry_run: { tool: peek } }
`,
    });
    expect(issues).toEqual([
      expect.objectContaining({
        path: "mcp_servers.cluster.tools.peek.dry_run",
        message: "dry_run is for mutating tools (mutating: true)",
      }),
    ]);
  });

  it("a key that is not a usable tool name or glob is an error", () => {
    const issues = loadIssues({
      tarsy: `
mcp_servers:
  cluster:
    transport: { type: stdio, command: "true" }
    tools:
      "delete_[": { mutating: true }
      " padded": { mutating: false }
`,
    });
    expect(issues).toEqual([
      expect.objectContaining({
        path: "mcp_servers.cluster.tools.delete_[",
        message: expect.stringContaining("not a valid tool name or glob"),
      }),
      expect.objectContaining({
        path: "mcp_servers.cluster.tools. padded",
        message: expect.stringContaining("leading or trailing spaces"),
      }),
    ]);
  });
});
