import { resolveAgentType, stageKindFor } from "./agent-type.ts";
import { getStage, type ResolvedAgentConfig, resolveAgentConfig } from "./resolve.ts";
import type {
  AgentType,
  ChainConfig,
  StageAgentConfig,
  StageConfig,
  SuccessPolicy,
  TarsyConfig,
} from "./types.ts";

/** One agent execution of a stage. */
export interface StageExecutionConfig {
  /** Shown in the dashboard and stored on the execution; `{Name}-{n}` for replicas. */
  display_name: string;
  /** Launch order within the stage (0-based). */
  index: number;
  agent: StageAgentConfig;
  config: ResolvedAgentConfig;
  /** `action` runs with the action safety guidelines (execution kind `action`). */
  agent_type: AgentType;
}

export interface StagePlan {
  stage_index: number;
  stage_name: string;
  /** `action` when every agent of the stage is an action agent, else `investigation`. */
  kind: "action" | "investigation";
  /** `multi_agent` for several agents, `replica` for `replicas > 1`, null for one execution. */
  parallel_type: "multi_agent" | "replica" | null;
  success_policy: SuccessPolicy;
  executions: StageExecutionConfig[];
  /** A synthesis stage follows when more than one execution ran. */
  needs_synthesis: boolean;
}

/** stage `success_policy` → `defaults.success_policy` → `any`. */
export function resolveSuccessPolicy(config: TarsyConfig, stage: StageConfig): SuccessPolicy {
  return stage.success_policy ?? config.defaults.success_policy ?? "any";
}

/**
 * The executions of a stage: one per listed agent, or `replicas` copies of the single agent
 * named `{Name}-1..N` (resolved with the base name). Resolution errors are thrown.
 */
export function planStage(config: TarsyConfig, chain: ChainConfig, stageIndex: number): StagePlan {
  const stage = getStage(chain, stageIndex);
  const executions: StageExecutionConfig[] = [];
  if (stage.replicas > 1) {
    const agent = stage.agents[0];
    if (agent) {
      const resolved = resolveAgentConfig(config, chain, stageIndex, agent);
      for (let n = 1; n <= stage.replicas; n++) {
        executions.push({
          display_name: `${agent.name}-${n}`,
          index: n - 1,
          agent,
          config: { ...resolved, mcp_servers: [...resolved.mcp_servers] },
          agent_type: resolveAgentType(config, agent),
        });
      }
    }
  } else {
    stage.agents.forEach((agent, index) => {
      executions.push({
        display_name: agent.name,
        index,
        agent,
        config: resolveAgentConfig(config, chain, stageIndex, agent),
        agent_type: resolveAgentType(config, agent),
      });
    });
  }
  const parallelType =
    stage.replicas > 1 ? "replica" : stage.agents.length > 1 ? "multi_agent" : null;
  return {
    stage_index: stageIndex,
    stage_name: stage.name,
    kind: stageKindFor(executions.map((e) => e.agent_type)),
    parallel_type: parallelType,
    success_policy: resolveSuccessPolicy(config, stage),
    executions,
    needs_synthesis: executions.length > 1,
  };
}
