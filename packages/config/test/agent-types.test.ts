/**
 * `agents.<name>.type` and `stages[].agents[].type`: action agents, the action stage (all of
 * its agents are action agents), kinds that are not built yet, and the mixed-stage warning.
 */
import { describe, expect, it } from "vitest";
import { planStage } from "../src/index.ts";
import { load, loadIssues } from "./helpers.ts";

const PROVIDERS = `
llm_providers:
  canned: { type: scripted, model: scripted }
`;

const TARSY = `
defaults:
  llm_provider: canned
mcp_servers:
  k8s: { transport: { type: stdio, command: k } }
agents:
  Investigator:
    mcp_servers: [k8s]
  Remediator:
    type: action
    mcp_servers: [k8s]
  Planner:
    type: orchestrator
  Plain:
    type: default
agent_chains:
  with-action:
    alert_types: [A]
    stages:
      - name: investigate
        agents: [Investigator]
      - name: remediate
        agents: [Remediator]
      - name: mixed
        agents: [Investigator, Remediator]
      - name: ref-makes-action
        agents:
          - { name: Investigator, type: action }
          - { name: Plain, type: action }
      - name: ref-makes-default
        agents:
          - { name: Remediator, type: default }
      - name: orchestrated
        agents:
          - Planner
          - { name: Investigator, type: scoring }
      - name: replicas
        agent: Remediator
        replicas: 2
`;

function loaded() {
  return load({ tarsy: TARSY, providers: PROVIDERS });
}

describe("agent types", () => {
  it("a stage whose agents are all action agents is an action stage", () => {
    const { config } = loaded();
    const chain = config.chains.get("with-action");
    if (!chain) throw new Error("chain missing");
    const plans = chain.stages.map((_, i) => planStage(config, chain, i));
    expect(plans.map((p) => [p.stage_name, p.kind, p.executions.map((e) => e.agent_type)])).toEqual(
      [
        ["investigate", "investigation", ["default"]],
        ["remediate", "action", ["action"]],
        // The action agent of a mixed stage is still an action agent; the stage is not.
        ["mixed", "investigation", ["default", "action"]],
        // The reference's type wins over the definition's, both ways.
        ["ref-makes-action", "action", ["action", "action"]],
        ["ref-makes-default", "investigation", ["default"]],
        // Kinds not built yet run as default agents.
        ["orchestrated", "investigation", ["default", "default"]],
        ["replicas", "action", ["action", "action"]],
      ],
    );
  });

  it("warns about a mixed stage and about kinds that are not built yet, naming #24", () => {
    const { warnings, dir } = loaded();
    const mine = warnings
      .filter((w) => w.message.includes("type ") || w.message.includes("mixes"))
      .map((w) => ({ ...w, file: w.file.replace(dir, "") }));
    expect(mine).toEqual([
      {
        file: "/tarsy.yaml",
        path: "agents.Planner.type",
        message:
          'type "orchestrator" is not needed: an agent orchestrates when it has a sub-agent catalog (the Go TARSy dropped the type too); runs as a default agent',
      },
      {
        file: "/tarsy.yaml",
        path: "agent_chains.with-action.stages[2]",
        message:
          'stage "mixed" mixes action agents (Remediator) with other agents: it runs as an investigation stage (only a stage whose agents are all action agents is an action stage); the action agents still get the action safety guidelines',
      },
      {
        file: "/tarsy.yaml",
        path: "agent_chains.with-action.stages[5].agents[1].type",
        message:
          'type "scoring" (in the Go TARSy: a scoring agent as a chain stage) is not supported yet; runs as a default agent (planned in #24)',
      },
    ]);
    // `type` is read, so it is never listed as an unsupported key.
    expect(warnings.filter((w) => w.unsupported?.key.endsWith(".type"))).toEqual([]);
    expect(warnings.filter((w) => w.message.includes("not a known setting"))).toEqual([]);
  });

  it("type: compose is an error with its file, path and line, on a definition and on a stage agent", () => {
    const issues = loadIssues({
      providers: PROVIDERS,
      tarsy: `defaults: { llm_provider: canned }
agents:
  Writer:
    type: compose
agent_chains:
  c:
    alert_types: [A]
    stages:
      - name: s
        agents:
          - { name: Writer, type: compose }
`,
    });
    const because =
      'type "compose" cannot be configured: TARSy adds the compose stage (the amended report) by itself after each successful action stage; use type "default" or "action"';
    expect(issues).toEqual([
      { file: "tarsy.yaml", path: "agents.Writer.type", line: 4, message: because },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.stages[0].agents[0].type",
        line: 11,
        message: because,
      },
    ]);
  });

  it("an unknown type is an error with its path", () => {
    const issues = loadIssues({
      providers: PROVIDERS,
      tarsy: "defaults: { llm_provider: canned }\nagents:\n  X:\n    type: remediator\n",
    });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ file: "tarsy.yaml", path: "agents.X.type" });
    expect(issues[0]?.message).toContain("action");
  });
});
