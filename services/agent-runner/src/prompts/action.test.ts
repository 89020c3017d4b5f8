import { describe, expect, test } from "vitest";
import type { ExecutionContext } from "../execution-context.ts";
import { buildFunctionCallingMessages } from "./index.ts";

function context(kind: ExecutionContext["kind"]): ExecutionContext {
  return {
    sessionId: "s1",
    stageId: "st1",
    executionId: "e1",
    kind,
    agentName: "Remediator",
    agentIndex: 1,
    alertType: "PodCrashLoop",
    alertData: "pod=web-1",
    runbook: "1. Look at the pod.",
    previousContext: "### investigate\nweb-1 is OOM-killed.",
    config: {
      agentName: "Remediator",
      providerName: "p",
      llm: { provider: "scripted" },
      streamLimits: {},
      fallbacks: [],
      requiresNativeTools: false,
      maxIterations: 3,
      iterationTimeoutMs: 1000,
      mcpServers: ["kubernetes-server"],
      toolFilters: {},
      customInstructions: "Only restart pods.",
      requiredSkills: [],
      onDemandSkills: [],
      subAgents: [],
      orchestrator: { max_concurrent_agents: 5 },
    },
    mcpInstructions: new Map(),
    summarization: new Map(),
    failedServers: {},
  };
}

const PRINCIPLES = [
  "Require hard evidence before acting",
  "do not re-investigate",
  "If the evidence is ambiguous or conflicting, report your assessment but do NOT act",
  "Explain your reasoning BEFORE calling any action tool",
  "Prefer inaction over incorrect action",
  "Write a short action memo",
  "Do not reprint or rewrite the investigation report",
];

describe("action agent prompts", () => {
  test("system: the usual tiers, then the action safety guidelines", () => {
    const [system, user] = buildFunctionCallingMessages(context("action"));
    const text = system?.content ?? "";
    const custom = text.indexOf("## Agent-Specific Instructions (Remediator)");
    const safety = text.indexOf("## Action Agent Safety Guidelines");
    expect(custom).toBeGreaterThan(0);
    expect(safety).toBeGreaterThan(custom);
    for (const principle of PRINCIPLES) expect(text).toContain(principle);
    // The task: evaluate the upstream analysis, answer with a memo (the compose stage amends
    // the report, ADR-0025 Q7), end with YES or NO.
    const task = user?.content ?? "";
    expect(task).toContain("web-1 is OOM-killed.");
    expect(task).toContain("Evaluate the upstream investigation findings");
    expect(task).toContain("answer with a short action memo");
    expect(task).toContain("Do not reprint the investigation report");
    expect(`${text}\n${task}`).not.toMatch(/amend(ed)? (it|with)|reproduce it/i);
    expect(task).toContain("End your response with YES or NO on the very last line");
    expect(task).not.toContain("Investigate this alert using the available tools");
  });

  test("an investigation agent gets neither the guidelines nor the YES/NO task", () => {
    const [system, user] = buildFunctionCallingMessages(context("investigation"));
    expect(system?.content).not.toContain("Action Agent Safety Guidelines");
    expect(user?.content).not.toContain("YES or NO");
  });
});
