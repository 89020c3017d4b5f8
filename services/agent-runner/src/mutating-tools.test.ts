import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type TarsyConfig } from "@tarsy/config";
import type { ExecutionKind, ExecutionRequested } from "@tarsy/contracts";
import { afterAll, describe, expect, it } from "vitest";
import type { ExecutionRecord } from "./ports.ts";
import { resolveExecutionContext } from "./resolve.ts";

/**
 * Who the gateway lets see and run mutating tools (#30): `type: action` agents only. A stage
 * agent by its resolved type (an action stage, or an action agent of a mixed stage); a
 * sub-agent by its own definition; chat, synthesis, scoring and summaries never.
 */
const YAML = `
mcp_servers:
  cluster:
    transport: { type: stdio, command: "true" }
agents:
  Investigator: { mcp_servers: [cluster] }
  Remediator: { type: action, mcp_servers: [cluster] }
  Fixer: { type: action, description: "fixes", mcp_servers: [cluster] }
  Looker: { description: "looks", mcp_servers: [cluster] }
agent_chains:
  acts:
    alert_types: [Acts]
    stages:
      - name: investigate
        agents: [{ name: Investigator, sub_agents: [Fixer, Looker] }]
      - name: remediate
        agents: [Remediator]
      - name: mixed
        agents: [Investigator, Remediator]
      - name: retyped
        agents: [{ name: Investigator, type: action }]
    chat: { enabled: true, sub_agents: [Fixer] }
`;

const dir = mkdtempSync(join(tmpdir(), "tarsy-mutating-"));
writeFileSync(join(dir, "tarsy.yaml"), YAML);
const config: TarsyConfig = loadConfig({ configDir: dir, env: {} }).config;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function allowed(options: {
  kind: ExecutionKind;
  agent: string;
  stage: string;
  index?: number;
  parent?: ExecutionRecord["parent"];
}): boolean | undefined {
  const stageIndex = ["investigate", "remediate", "mixed", "retyped"].indexOf(options.stage);
  const record = {
    id: "e1",
    sessionId: "s1",
    stageId: "st1",
    kind: options.kind,
    agentName: options.agent,
    agentIndex: options.index ?? 1,
    status: "active",
    attempt: 1,
    suspended: false,
    parked: false,
    finalAnalysis: null,
    actionsExecuted: null,
    forcedConclusion: null,
    labels: null,
    errorMessage: null,
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    createdAt: new Date(),
    completedAt: null,
    session: {
      alertData: "{}",
      alertType: "Acts",
      chainId: "acts",
      project: "default",
      runbookUrl: null,
      runbook: null,
      mcpSelection: null,
    },
    stage: { name: options.stage, index: stageIndex },
    task: options.parent ? "do it" : null,
    parent: options.parent ?? null,
  } satisfies ExecutionRecord;
  const request: ExecutionRequested = {
    v: 1,
    session_id: "s1",
    stage_id: "st1",
    execution_id: "e1",
    kind: options.kind,
    agent_name: options.agent,
    agent_index: options.index ?? 1,
    requested_at: new Date().toISOString(),
    ...(options.kind === "chat" && {
      chat: { chat_id: "c1", message_id: "m1", question: "why?" },
    }),
  };
  return resolveExecutionContext(config, record, request, null).config.allowMutatingTools;
}

describe("mutating tools: who may", () => {
  it("an investigation agent may not; an action stage's agent may", () => {
    expect(allowed({ kind: "investigation", agent: "Investigator", stage: "investigate" })).toBe(
      false,
    );
    expect(allowed({ kind: "action", agent: "Remediator", stage: "remediate" })).toBe(true);
  });

  it("in a mixed stage, by each agent's resolved type (the stage reference's type wins)", () => {
    expect(allowed({ kind: "investigation", agent: "Investigator", stage: "mixed" })).toBe(false);
    expect(allowed({ kind: "investigation", agent: "Remediator", stage: "mixed", index: 2 })).toBe(
      true,
    );
    expect(allowed({ kind: "action", agent: "Investigator", stage: "retyped" })).toBe(true);
  });

  it("a sub-agent by its own definition, whoever dispatched it", () => {
    const parent = { id: "p1", kind: "investigation" as const, agentIndex: 1 };
    expect(allowed({ kind: "investigation", agent: "Fixer", stage: "investigate", parent })).toBe(
      true,
    );
    expect(allowed({ kind: "investigation", agent: "Looker", stage: "investigate", parent })).toBe(
      false,
    );
  });

  it("chat, synthesis, scoring and summaries never", () => {
    expect(allowed({ kind: "chat", agent: "ChatAgent", stage: "investigate" })).toBe(false);
    expect(allowed({ kind: "synthesis", agent: "SynthesisAgent", stage: "mixed" })).toBe(false);
    expect(allowed({ kind: "scoring", agent: "ScoringAgent", stage: "investigate" })).toBe(false);
    expect(
      allowed({ kind: "executive_summary", agent: "ExecSummaryAgent", stage: "investigate" }),
    ).toBe(false);
  });
});
