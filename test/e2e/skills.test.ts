import { resolve } from "node:path";
import type {
  LLMInteractionDetail,
  SystemConfigResponse,
  TimelineResponse,
  TraceListResponse,
} from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/skills");

/**
 * Skills end to end: every service a process, skills read from testdata/skills/skills/, the
 * scripted LLM calling load_skill. What the agent was sent is read through the trace API.
 */
describe("e2e: Skills", () => {
  let sys: E2E;
  const get = async <T>(path: string): Promise<T> => {
    const r = await sys.api<T>(path);
    expect(r.status, `GET ${path}`).toBe(200);
    return r.body;
  };

  beforeAll(async () => {
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
    });
  }, 180_000);

  afterAll(async () => {
    saveLogs(sys, "skills");
    await sys?.stop();
  });

  it("a required skill is in the prompt; load_skill returns the known body and a note on the unknown name", async () => {
    const id = await submitAlert(sys, "Skilled", { pod: "payments-api", reason: "OOMKilled" });
    await waitStatus(sys, id, ["completed"], 90_000);

    // What the LLM was sent: its last call holds the whole conversation.
    const trace = await get<TraceListResponse>(`/api/v1/sessions/${id}/trace`);
    const calls = trace.stages.flatMap((s) =>
      s.executions
        .filter((e) => e.agent_name === "SkilledAgent")
        .flatMap((e) => e.llm_interactions),
    );
    expect(calls).toHaveLength(2);
    const last = await get<LLMInteractionDetail>(
      `/api/v1/sessions/${id}/trace/llm/${calls[calls.length - 1]?.id}`,
    );
    const system = last.conversation.find((m) => m.role === "system")?.content ?? "";
    expect(system).toContain(
      "## Pre-loaded Skills\n\n### escalation\n\n# Escalation\n\nESCALATION-RULE: page the on-call SRE",
    );
    expect(system).toContain(
      "<available_skills>\n- **oom-triage**: Triage of OOMKilled pods (heap versus memory limit)\n</available_skills>",
    );
    const tool = last.conversation.find((m) => m.role === "tool");
    expect(tool?.tool_name).toBe("load_skill");
    expect(tool?.content).toContain("## Skill: oom-triage\n\n# OOM triage\n\nOOM-STEP: compare");
    expect(tool?.content).toContain('Note: not loaded, unknown skill name(s) "no-such-skill"');
    expect(tool?.content).toContain("- **oom-triage**:");
    expect(tool?.content).not.toContain("ESCALATION-RULE");

    // The timeline: the required skill, the call, the skill it loaded, the answer.
    const timeline = await get<TimelineResponse>(`/api/v1/sessions/${id}/timeline`);
    const agentEvents = timeline.events.filter((e) =>
      ["skill_loaded", "llm_tool_call", "final_analysis"].includes(e.event_type),
    );
    expect(
      agentEvents.map((e) => [e.event_type, e.event_type === "final_analysis" ? "" : e.content]),
    ).toEqual([
      ["skill_loaded", "escalation"],
      ["llm_tool_call", tool?.content],
      ["skill_loaded", "oom-triage"],
      ["final_analysis", ""],
    ]);
    expect(agentEvents.map((e) => e.metadata)).toEqual([
      { skill: "escalation", source: "required" },
      expect.objectContaining({ tool_name: "load_skill", is_error: false }),
      { skill: "oom-triage", source: "load_skill" },
      null,
    ]);

    // The call is in the trace like an MCP tool call.
    const mcp = trace.stages.flatMap((s) => s.executions.flatMap((e) => e.mcp_interactions));
    expect(mcp.filter((i) => i.interaction_type === "tool_call").map((i) => i.tool_name)).toEqual([
      "load_skill",
    ]);
  });

  it("the system config lists the skills", async () => {
    const config = await get<SystemConfigResponse>("/api/v1/system/config");
    expect(config.skills).toEqual([
      { name: "escalation", description: "When and how to page the on-call team" },
      { name: "oom-triage", description: "Triage of OOMKilled pods (heap versus memory limit)" },
    ]);
  });
});
