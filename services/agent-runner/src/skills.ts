import type { ResolvedSkill } from "@tarsy/config";
import { z } from "zod";
import type { ToolCallResult, ToolDefinition, ToolGateway } from "./ports.ts";
import { skillCatalogLines } from "./prompts/skills.ts";
import type { RunContext } from "./run-context.ts";

/**
 * Skills in the runner: required skills are announced (`skill_loaded`) when the execution
 * starts; on-demand ones are served by `load_skill`, a tool the runner answers itself from the
 * resolved configuration. It goes through the tool loop like an MCP tool (the `llm_tool_call`
 * event, the tool_call interaction record, the `tool` message): only the gateway differs.
 */

export const LOAD_SKILL_TOOL = "load_skill";

export const LOAD_SKILL_DEFINITION: ToolDefinition = {
  name: LOAD_SKILL_TOOL,
  server: "",
  tool: LOAD_SKILL_TOOL,
  description:
    "Load skills by name. Returns the full skill content for each requested skill (see Available Skills).",
  inputSchema: {
    type: "object",
    properties: {
      names: { type: "array", items: { type: "string" }, description: "Skill names to load" },
    },
    required: ["names"],
  },
};

const LoadSkillArgsSchema = z.object({
  names: z.array(z.string().trim().min(1)).min(1, "name at least one skill"),
});

export type SkillSource = "required" | "load_skill";

/** What one `load_skill` call answers, and which skills it handed over. */
export interface LoadSkillOutcome {
  content: string;
  isError: boolean;
  arguments: Record<string, unknown> | undefined;
  loaded: ResolvedSkill[];
}

function available(skills: readonly ResolvedSkill[]): string {
  return skills.length > 0
    ? `Available skills:\n${skillCatalogLines(skills)}`
    : "No skills are available.";
}

function parseArgs(raw: string): unknown {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/**
 * Answers `load_skill` from the agent's on-demand skills: the bodies of the known names; a
 * note after them names unknown ones with the catalog; only unknown names is an error.
 */
export function answerLoadSkill(
  skills: readonly ResolvedSkill[],
  rawArguments: string,
): LoadSkillOutcome {
  const parsedJson = parseArgs(rawArguments);
  const args = LoadSkillArgsSchema.safeParse(parsedJson);
  const asRecord =
    typeof parsedJson === "object" && parsedJson !== null && !Array.isArray(parsedJson)
      ? (parsedJson as Record<string, unknown>)
      : undefined;
  if (!args.success) {
    const problems = args.error.issues
      .map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
      .join("; ");
    return {
      content: `Invalid arguments for load_skill (expected {"names": ["<skill>", ...]}): ${parsedJson === undefined ? "not JSON" : problems}\n\n${available(skills)}`,
      isError: true,
      arguments: asRecord,
      loaded: [],
    };
  }
  const byName = new Map(skills.map((s) => [s.name, s]));
  const names = [...new Set(args.data.names)];
  const loaded = names.flatMap((name) => byName.get(name) ?? []);
  const unknown = names.filter((name) => !byName.has(name));
  const list = unknown.map((n) => `"${n}"`).join(", ");
  if (loaded.length === 0) {
    return {
      content: `No skill loaded: unknown skill name(s) ${list}.\n\n${available(skills)}`,
      isError: true,
      arguments: args.data,
      loaded,
    };
  }
  const bodies = loaded.map((skill) => `## Skill: ${skill.name}\n\n${skill.body.trim()}`);
  if (unknown.length > 0) {
    bodies.push(`---\nNote: not loaded, unknown skill name(s) ${list}.\n\n${available(skills)}`);
  }
  return { content: bodies.join("\n\n"), isError: false, arguments: args.data, loaded };
}

/** A `skill_loaded` event per skill: metadata `{ skill, source }`, the name as content. */
export async function recordSkillsLoaded(
  run: RunContext,
  skills: readonly ResolvedSkill[],
  source: SkillSource,
): Promise<void> {
  for (const skill of skills) {
    await run.timeline.create("skill_loaded", {
      status: "completed",
      content: skill.name,
      metadata: { skill: skill.name, source },
    });
  }
}

/**
 * The execution's tools with `load_skill` in front when the agent has on-demand skills: the
 * gateway answers it in-process and passes every other call to `inner`.
 */
export function withLoadSkill(
  run: RunContext,
  tools: readonly ToolDefinition[],
): { tools: ToolDefinition[]; gateway: ToolGateway } {
  const skills = run.exec.config.onDemandSkills;
  const inner = run.tools;
  if (skills.length === 0) return { tools: [...tools], gateway: inner };
  const gateway: ToolGateway = {
    listTools: (scope, signal) => inner.listTools(scope, signal),
    release: (executionId) => inner.release(executionId),
    async callTool(scope, call, signal): Promise<ToolCallResult> {
      if (call.name !== LOAD_SKILL_TOOL) return inner.callTool(scope, call, signal);
      const started = performance.now();
      const outcome = answerLoadSkill(skills, call.arguments);
      await recordSkillsLoaded(run, outcome.loaded, "load_skill");
      return {
        server: "",
        tool: LOAD_SKILL_TOOL,
        arguments: outcome.arguments,
        content: outcome.content,
        isError: outcome.isError,
        source: "tarsy",
        durationMs: Math.round(performance.now() - started),
      };
    },
  };
  return { tools: [LOAD_SKILL_DEFINITION, ...tools], gateway };
}
