import type { ChainConfig, StageAgentConfig, TarsyConfig } from "../src/index.ts";
import { load } from "./helpers.ts";

/** A configuration that sets each level of the hierarchy somewhere, for resolution tests. */
export const RESOLUTION_PROVIDERS = `
llm_providers:
  base-google: { type: google, model: gemini-2.5-pro, native_tools: { google_search: true, url_context: true } }
  chain-openai: { type: openai, model: gpt-5 }
  agent-anthropic: { type: anthropic, model: claude-sonnet-4-20250514 }
  summary-xai: { type: xai, model: grok-4 }
  canned: { type: scripted, model: scripted }
`;

export const RESOLUTION_TARSY = `
defaults:
  llm_provider: base-google
  max_iterations: 11
  iteration_timeout: 90s
mcp_servers:
  s-agent: { transport: { type: stdio, command: a } }
  s-chain: { transport: { type: stdio, command: c } }
  s-stage-agent: { transport: { type: stdio, command: sa } }
  s-chat: { transport: { type: stdio, command: chat } }
agents:
  Plain:
    mcp_servers: [s-agent]
  Tuned:
    mcp_servers: [s-agent]
    max_iterations: 12
    llm_backend: langchain
    custom_instructions: be tuned
    native_tools: { code_execution: true, url_context: false }
agent_chains:
  bare:
    alert_types: [bare]
    stages:
      - name: only
        agents: [Plain, Tuned]
  chain-level:
    alert_types: [chain-level]
    llm_provider: chain-openai
    max_iterations: 13
    mcp_servers: [s-chain]
    stages:
      - name: inherit
        agents: [Plain, Tuned]
      - name: stage-level
        max_iterations: 14
        iteration_timeout: 45s
        agents:
          - Plain
          - name: Tuned
            llm_provider: agent-anthropic
            max_iterations: 15
            mcp_servers: [s-stage-agent]
  backend-order:
    alert_types: [backend-order]
    stages:
      - name: s
        agents:
          - Plain
          - Tuned
          - { name: Tuned, llm_backend: google-native }
          - { name: Plain, iteration_strategy: react }
  chain-backend:
    alert_types: [chain-backend]
    llm_backend: google-native
    executive_summary_provider: summary-xai
    stages:
      - name: s
        agents: [Tuned]
  replicated:
    alert_types: [replicated]
    stages:
      - name: triple
        replicas: 3
        success_policy: all
        agents: [{ name: Plain, max_iterations: 4 }]
      - name: pair
        agents: [Plain, Tuned]
        synthesis: { agent: Tuned, llm_provider: agent-anthropic, llm_backend: langchain }
  chatty:
    alert_types: [chatty]
    llm_provider: chain-openai
    executive_summary_provider: summary-xai
    stages:
      - name: one
        agents: [Plain]
      - name: two
        agents: [{ name: Tuned, mcp_servers: [s-stage-agent] }]
    chat:
      llm_provider: summary-xai
      max_iterations: 3
  chat-servers:
    alert_types: [chat-servers]
    mcp_servers: [s-chain]
    stages: [{ name: s, agents: [Plain] }]
    chat: { agent: Tuned, mcp_servers: [s-chat] }
  chat-aggregate:
    alert_types: [chat-aggregate]
    mcp_servers: [s-chain]
    stages: [{ name: s, agents: [{ name: Plain, mcp_servers: [s-stage-agent] }] }]
  no-chat:
    alert_types: [no-chat]
    stages: [{ name: s, agents: [Plain] }]
    chat: { enabled: false }
  canned-chain:
    alert_types: [canned]
    llm_provider: canned
    llm_backend: scripted
    stages: [{ name: s, agents: [Plain] }]
`;

export function resolutionConfig(extraDefaults = ""): TarsyConfig {
  const tarsy = extraDefaults
    ? RESOLUTION_TARSY.replace("defaults:\n", `defaults:\n${extraDefaults}`)
    : RESOLUTION_TARSY;
  return load({ tarsy, providers: RESOLUTION_PROVIDERS }).config;
}

export function chainOf(config: TarsyConfig, id: string): ChainConfig {
  const chain = config.chains.get(id);
  if (!chain) throw new Error(`fixture chain ${id} missing`);
  return chain;
}

export function agentAt(chain: ChainConfig, stage: number, index: number): StageAgentConfig {
  const agent = chain.stages[stage]?.agents[index];
  if (!agent) throw new Error(`fixture agent ${stage}/${index} missing`);
  return agent;
}
