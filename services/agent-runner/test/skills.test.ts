import {
  listLLMInteractions,
  listMCPInteractions,
  listMessages,
  listSessionTimeline,
} from "@tarsy/db";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runExecution } from "../src/execution.ts";
import { createGatewayTools } from "../src/gateway.ts";
import {
  createEnv,
  type Env,
  logger,
  record,
  runnerDeps,
  type ServiceProcess,
  seedExecution,
  startGatewayProcess,
  startLlm,
} from "./support.ts";

const skill = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

let env: Env;
let gateway: ServiceProcess;
beforeAll(async () => {
  env = await createEnv({
    skills: {
      escalation: skill(
        "escalation",
        "When to page the on-call team",
        "ESCALATION-BODY: page SRE.",
      ),
      "oom-triage": skill(
        "oom-triage",
        "Triage of OOMKilled pods",
        "OOM-BODY: compare heap and limit.",
      ),
      "kubectl-basics": skill("kubectl-basics", "Read-only kubectl patterns", "KUBECTL-BODY"),
    },
    agentYaml: "required_skills: [escalation]",
  });
  gateway = await startGatewayProcess(env);
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  await env?.cleanup();
});

async function run(script: unknown, options: Parameters<typeof seedExecution>[1] = {}) {
  const llm = await startLlm(script);
  const request = await seedExecution(env, options);
  const rec = await record(env, request.session_id);
  const tools = createGatewayTools(createMcpGatewayClient(env.bus), logger);
  try {
    const finished = await runExecution(
      runnerDeps(env, llm.client, tools),
      request,
      new AbortController().signal,
    );
    return { finished, request, rec };
  } finally {
    rec.stop();
    await llm.stop();
  }
}

const CATALOG_ENTRY = (name: string) => `- **${name}**:`;

describe("skills in the runner (real mcp-gateway)", () => {
  test("required skill in the prompt, load_skill for valid, partly and wholly unknown names, and bad arguments", async () => {
    const { finished, request, rec } = await run([
      {
        tool_calls: [
          { id: "s1", name: "load_skill", arguments: { names: ["oom-triage", "nope"] } },
        ],
      },
      { tool_calls: [{ id: "s2", name: "load_skill", arguments: { names: ["ghost"] } }] },
      { tool_calls: [{ id: "s3", name: "load_skill", arguments: { names: "oom-triage" } }] },
      // A required skill is not on demand: asking for it is an unknown name.
      { tool_calls: [{ id: "s4", name: "load_skill", arguments: { names: ["escalation"] } }] },
      { tool_calls: [{ id: "e1", name: "everything.echo", arguments: { message: "still here" } }] },
      { text: "Final: OOM, escalate." },
    ]);
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Final: OOM, escalate.",
    });
    const p = env.db.prisma;

    // The system prompt: the required body pre-loaded, the others in the catalog.
    const messages = await listMessages(p, request.execution_id);
    const system = messages[0]?.content ?? "";
    expect(system).toContain(
      "## Pre-loaded Skills\n\n### escalation\n\nESCALATION-BODY: page SRE.",
    );
    expect(system).toContain("## Available Skills");
    expect(system).toContain(CATALOG_ENTRY("kubectl-basics"));
    expect(system).toContain("- **oom-triage**: Triage of OOMKilled pods");
    expect(system).not.toContain(CATALOG_ENTRY("escalation"));
    expect(system).not.toContain("OOM-BODY");
    expect(system.indexOf("EVERYTHING-INSTRUCTIONS")).toBeLessThan(system.indexOf("Pre-loaded"));
    expect(system.indexOf("Available Skills")).toBeLessThan(system.indexOf("CUSTOM-INSTRUCTIONS"));

    // The LLM was offered load_skill beside the MCP tools.
    const [first] = await listLLMInteractions(p, { executionId: request.execution_id });
    if (!first) throw new Error("no LLM interaction");
    const offered = (first.llmRequest as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(offered[0]).toBe("load_skill");
    expect(offered).toContain("everything.echo");

    // What each call answered (the tool messages).
    const answer = (id: string) => messages.find((m) => m.toolCallId === id)?.content ?? "";
    expect(answer("s1")).toContain("## Skill: oom-triage\n\nOOM-BODY: compare heap and limit.");
    expect(answer("s1")).toContain('Note: not loaded, unknown skill name(s) "nope"');
    expect(answer("s1")).toContain("- **kubectl-basics**: Read-only kubectl patterns");
    expect(answer("s2")).toMatch(/^No skill loaded: unknown skill name\(s\) "ghost"/);
    expect(answer("s2")).toContain("- **oom-triage**: Triage of OOMKilled pods");
    expect(answer("s3")).toMatch(/^Invalid arguments for load_skill/);
    expect(answer("s3")).toContain("names:");
    expect(answer("s4")).toMatch(/^No skill loaded: unknown skill name\(s\) "escalation"/);
    expect(answer("e1")).toContain("still here");

    // The timeline: the required skill first, then each call; one skill_loaded per skill loaded,
    // after the call that loaded it.
    const timeline = await listSessionTimeline(p, request.session_id);
    const summary = timeline.map((e) =>
      e.eventType === "skill_loaded"
        ? ["skill_loaded", e.content, e.metadata]
        : e.eventType === "llm_tool_call"
          ? [
              "llm_tool_call",
              (e.metadata as { tool_name: string }).tool_name,
              (e.metadata as { is_error: boolean }).is_error,
            ]
          : [e.eventType],
    );
    expect(summary).toEqual([
      ["skill_loaded", "escalation", { skill: "escalation", source: "required" }],
      ["llm_tool_call", "load_skill", false],
      ["skill_loaded", "oom-triage", { skill: "oom-triage", source: "load_skill" }],
      ["llm_tool_call", "load_skill", true],
      ["llm_tool_call", "load_skill", true],
      ["llm_tool_call", "load_skill", true],
      ["llm_tool_call", "echo", false],
      ["final_analysis"],
    ]);
    // Live viewers got them too.
    const published = rec.events.filter(
      (e) => "event_type" in e && e.event_type === "skill_loaded",
    );
    expect(published).toHaveLength(2);

    // Recorded like an MCP tool call: one tool_call interaction per call, arguments and result.
    const calls = (await listMCPInteractions(p, { sessionId: request.session_id })).filter(
      (i) => i.interactionType === "tool_call",
    );
    expect(
      calls.map((c) => [c.toolName, (c.toolResult as { is_error: boolean }).is_error]),
    ).toEqual([
      ["load_skill", false],
      ["load_skill", true],
      ["load_skill", true],
      ["load_skill", true],
      ["echo", false],
    ]);
    expect(calls[0]?.toolArguments).toEqual({ names: ["oom-triage", "nope"] });
    expect(calls[1]?.errorMessage).toContain('"ghost"');
  });

  test("chat gets the catalog and load_skill too (the chat agent sets no allowlist)", async () => {
    const { finished, request } = await run(
      [
        { tool_calls: [{ id: "c1", name: "load_skill", arguments: { names: ["escalation"] } }] },
        { text: "Page SRE." },
      ],
      { kind: "chat", stageName: "Chat Response", context: "Final: OOM.", question: "Who?" },
    );
    expect(finished.status).toBe("completed");
    const messages = await listMessages(env.db.prisma, request.execution_id);
    const system = messages[0]?.content ?? "";
    for (const name of ["escalation", "oom-triage", "kubectl-basics"]) {
      expect(system).toContain(CATALOG_ENTRY(name));
    }
    expect(system).not.toContain("Pre-loaded Skills");
    expect(messages.find((m) => m.toolCallId === "c1")?.content).toContain(
      "## Skill: escalation\n\nESCALATION-BODY",
    );
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.filter((e) => e.eventType === "skill_loaded").map((e) => e.metadata)).toEqual([
      { skill: "escalation", source: "load_skill" },
    ]);
  });

  test("synthesis and the executive summary get no skills", async () => {
    const synthesis = await run([{ text: "Combined." }], {
      kind: "synthesis",
      stageName: "parallel - Synthesis",
      context: "Agent 1: OOM. Agent 2: leak.",
    });
    const summary = await run([{ text: "Summary." }], {
      kind: "executive_summary",
      context: "Final: OOM.",
    });
    for (const { finished, request } of [synthesis, summary]) {
      expect(finished.status).toBe("completed");
      const rows = await listLLMInteractions(env.db.prisma, { sessionId: request.session_id });
      expect(rows).toHaveLength(1);
      const [row] = rows;
      if (!row) throw new Error("no LLM interaction");
      const sent = JSON.stringify(row.llmRequest);
      expect((row.llmRequest as { tools: unknown[] }).tools).toEqual([]);
      const messages = await listMessages(env.db.prisma, request.execution_id);
      const text = JSON.stringify(messages) + sent;
      expect(text).not.toContain("Skills");
      expect(text).not.toContain("ESCALATION-BODY");
      const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
      expect(timeline.filter((e) => e.eventType === "skill_loaded")).toEqual([]);
    }
  });
});
