import { McpSelectionSchema } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import {
  resolveAgentConfig,
  resolveChatAgentConfig,
  resolveMcpSelection,
  UnknownReferenceError,
} from "../src/index.ts";
import { agentAt, chainOf, resolutionConfig } from "./fixtures.ts";

const config = resolutionConfig();
const chain = chainOf(config, "chain-level");
const resolved = resolveAgentConfig(config, chain, 1, agentAt(chain, 1, 1)); // s-stage-agent

describe("per-alert MCP selection", () => {
  it("uses the resolved agent's servers, unfiltered, when the alert has no selection", () => {
    for (const none of [undefined, null]) {
      expect(resolveMcpSelection(config, resolved, none)).toEqual({
        server_ids: ["s-stage-agent"],
        tool_filter: {},
      });
    }
  });

  it("replaces the configured servers instead of merging, with per-server tool filters", () => {
    const selection = McpSelectionSchema.parse({
      servers: [{ name: "s-chat", tools: ["get_pods", "get_logs"] }, { name: "s-agent" }],
    });
    expect(resolveMcpSelection(config, resolved, selection)).toEqual({
      server_ids: ["s-chat", "s-agent"],
      tool_filter: { "s-chat": ["get_pods", "get_logs"] },
    });
  });

  it("treats an empty tool list as every tool and keeps a native tools override", () => {
    const selection = McpSelectionSchema.parse({
      servers: [{ name: "s-chain", tools: [] }],
      native_tools: { google_search: false },
    });
    expect(resolveMcpSelection(config, resolved, selection)).toEqual({
      server_ids: ["s-chain"],
      tool_filter: {},
      native_tools_override: { google_search: false },
    });
  });

  it("applies to chat as well: the alert's selection replaces the chat servers", () => {
    const chat = resolveChatAgentConfig(config, chainOf(config, "chatty"));
    const selection = McpSelectionSchema.parse({ servers: [{ name: "s-chat" }] });
    expect(resolveMcpSelection(config, chat, selection).server_ids).toEqual(["s-chat"]);
  });

  it("rejects servers the configuration does not define, naming them", () => {
    const selection = McpSelectionSchema.parse({
      servers: [{ name: "s-chat" }, { name: "ghost" }, { name: "phantom" }],
    });
    let caught: unknown;
    try {
      resolveMcpSelection(config, resolved, selection);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UnknownReferenceError);
    expect((caught as UnknownReferenceError).code).toBe("unknown_reference");
    expect((caught as UnknownReferenceError).names).toEqual(["ghost", "phantom"]);
    expect((caught as Error).message).toBe('mcp_selection: unknown mcp_server "ghost", "phantom"');
  });

  it("requires at least one server in a selection", () => {
    expect(McpSelectionSchema.safeParse({ servers: [] }).success).toBe(false);
  });
});
