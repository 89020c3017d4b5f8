import type { ConfigIssue } from "./errors.ts";
import { formatPath } from "./interpolate.ts";
import type {
  AgentType,
  AgentTypeSetting,
  ConfigWarning,
  StageAgentConfig,
  TarsyConfig,
} from "./types.ts";

type Segment = string | number;

/** Agent kinds the Go TARSy has that this implementation runs as a default agent for now. */
const NOT_YET: Partial<Record<AgentTypeSetting, string>> = {
  synthesis: "a synthesis agent as a chain stage",
  scoring: "a scoring agent as a chain stage",
};

function effective(setting: AgentTypeSetting | undefined): AgentType {
  return setting === "action" ? "action" : "default";
}

/**
 * What a stage agent runs as: the reference's `type` wins over the agent definition's.
 * Only `action` changes anything (the action safety guidelines); any other value is `default`.
 */
export function resolveAgentType(config: TarsyConfig, agentRef: StageAgentConfig): AgentType {
  const setting = agentRef.type || config.agents.get(agentRef.name)?.type;
  return effective(setting);
}

/** A stage is an action stage only when every one of its agents resolves to `action`. */
export function stageKindFor(types: readonly AgentType[]): "action" | "investigation" {
  return types.length > 0 && types.every((t) => t === "action") ? "action" : "investigation";
}

/**
 * `type: compose` on an agent definition or a stage agent is an error, as in the Go TARSy: the
 * compose stage is TARSy's own, added after each successful action stage (ADR-0025), never a
 * configured agent. Each issue names its file line where the loader knows it.
 */
export function composeTypeIssues(
  config: TarsyConfig,
  lineOf: (file: string, path: readonly Segment[]) => number | undefined = () => undefined,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const check = (file: string, path: Segment[], setting: AgentTypeSetting | undefined) => {
    if (setting !== "compose") return;
    const line = lineOf(file, path);
    issues.push({
      file,
      path: formatPath(path),
      message:
        'type "compose" cannot be configured: TARSy adds the compose stage (the amended report) by itself after each successful action stage; use type "default" or "action"',
      ...(line !== undefined && { line }),
    });
  };
  for (const agent of config.agents.values()) {
    if (agent.builtin) continue;
    check(config.sources.agents.get(agent.name) ?? "", ["agents", agent.name, "type"], agent.type);
  }
  for (const chain of config.chains.values()) {
    if (chain.builtin) continue;
    const file = config.sources.chains.get(chain.id) ?? "";
    chain.stages.forEach((stage, s) => {
      stage.agents.forEach((ref, a) => {
        check(file, ["agent_chains", chain.id, "stages", s, "agents", a, "type"], ref.type);
      });
    });
  }
  return issues;
}

/**
 * Warnings about agent kinds: a kind that is not built yet (it runs as a default agent), and a
 * stage that mixes action and non-action agents (it stays an investigation stage; its action
 * agents still get the safety guidelines).
 */
export function agentTypeWarnings(config: TarsyConfig): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const notYet = (file: string, path: Segment[], setting: AgentTypeSetting | undefined) => {
    if (setting === "orchestrator") {
      warnings.push({
        file,
        path: formatPath(path),
        message:
          'type "orchestrator" is not needed: an agent orchestrates when it has a sub-agent catalog (the Go TARSy dropped the type too); runs as a default agent',
      });
      return;
    }
    const what = setting ? NOT_YET[setting] : undefined;
    if (!what) return;
    warnings.push({
      file,
      path: formatPath(path),
      message: `type "${setting}" (in the Go TARSy: ${what}) is not supported yet; runs as a default agent (planned in #24)`,
    });
  };
  for (const agent of config.agents.values()) {
    if (agent.builtin) continue;
    notYet(config.sources.agents.get(agent.name) ?? "", ["agents", agent.name, "type"], agent.type);
  }
  for (const chain of config.chains.values()) {
    if (chain.builtin) continue;
    const file = config.sources.chains.get(chain.id) ?? "";
    chain.stages.forEach((stage, s) => {
      stage.agents.forEach((ref, a) => {
        notYet(file, ["agent_chains", chain.id, "stages", s, "agents", a, "type"], ref.type);
      });
      const known = stage.agents.filter((ref) => config.agents.has(ref.name));
      if (known.length !== stage.agents.length) return; // reported as an error already
      const types = known.map((ref) => resolveAgentType(config, ref));
      if (!types.includes("action") || stageKindFor(types) === "action") return;
      const actions = stage.agents.filter((_, i) => types[i] === "action").map((r) => r.name);
      warnings.push({
        file,
        path: formatPath(["agent_chains", chain.id, "stages", s]),
        message: `stage "${stage.name}" mixes action agents (${actions.join(", ")}) with other agents: it runs as an investigation stage (only a stage whose agents are all action agents is an action stage); the action agents still get the action safety guidelines`,
      });
    });
  }
  return warnings;
}
