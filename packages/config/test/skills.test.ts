import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  type ConfigIssue,
  configView,
  loadConfig,
  resolveAgentConfig,
  resolveChatAgentConfig,
  resolveSynthesisConfig,
  type TarsyConfig,
} from "../src/index.ts";
import { configDir, withoutLines } from "./helpers.ts";

const PROVIDERS = `llm_providers:
  scripted-llm:
    type: scripted
    model: scripted-model
`;

const skill = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

/** A chain `c` whose one stage runs `ref` (YAML of one `agents[]` entry) with chat enabled. */
function tarsyYaml(agents: string, ref = "{ name: A }"): string {
  return `defaults:
  llm_provider: scripted-llm
  alert_type: t
agents:
${agents}
agent_chains:
  c:
    alert_types: [t]
    chat: { enabled: true, agent: A }
    stages:
      - name: s
        agents: [${ref}]
`;
}

/** A config dir with `skills/<name>/SKILL.md` for each entry (directory layout). */
function withSkillDirs(
  tarsy: string,
  skills: Record<string, string> = {
    "kubectl-basics": skill("kubectl-basics", "kubectl know-how", "KUBECTL-BODY"),
    escalation: skill("escalation", "who to page", "ESCALATION-BODY"),
    oom: skill("oom", "OOM triage", "OOM-BODY"),
  },
): string {
  const dir = configDir({ tarsy, providers: PROVIDERS });
  for (const [name, text] of Object.entries(skills)) {
    mkdirSync(join(dir, "skills", name), { recursive: true });
    writeFileSync(join(dir, "skills", name, "SKILL.md"), text);
  }
  return dir;
}

function loadDir(dir: string): TarsyConfig {
  return loadConfig({ configDir: dir, env: {} }).config;
}

function issuesOf(dir: string): ConfigIssue[] {
  try {
    loadConfig({ configDir: dir, env: {} });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map((i) => ({ ...i, file: i.file.replace(`${dir}/`, "") }));
  }
  throw new Error("expected the configuration to be invalid");
}

function stageAgent(config: TarsyConfig) {
  const chain = config.chains.get("c");
  const ref = chain?.stages[0]?.agents[0];
  if (!chain || !ref) throw new Error("no chain c");
  return resolveAgentConfig(config, chain, 0, ref);
}

const names = (list: readonly { name: string }[]) => list.map((s) => s.name);

describe("skill files", () => {
  it("directory layout: name, description and the markdown body after the frontmatter", () => {
    const config = loadDir(withSkillDirs(tarsyYaml("  A: {}")));
    expect([...config.skills.keys()]).toEqual(["escalation", "kubectl-basics", "oom"]);
    expect(config.skills.get("oom")).toMatchObject({
      name: "oom",
      description: "OOM triage",
      body: "OOM-BODY",
    });
    expect(config.skills.get("oom")?.file).toMatch(/skills\/oom\/SKILL\.md$/);
  });

  it("ConfigMap layout: each key a flat file; dotfiles and ..data links are skipped", () => {
    const dir = configDir({ tarsy: tarsyYaml("  A: {}"), providers: PROVIDERS });
    const skills = join(dir, "skills");
    // What a ConfigMap mount looks like: the keys link into a timestamped dir via ..data.
    const data = join(skills, "..2026_11_26_12_00_00.123");
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, "oom"), skill("oom", "OOM triage", "OOM-BODY"));
    writeFileSync(join(data, "escalation.md"), skill("escalation", "who to page", "PAGE"));
    symlinkSync("..2026_11_26_12_00_00.123", join(skills, "..data"));
    symlinkSync(join("..data", "oom"), join(skills, "oom"));
    symlinkSync(join("..data", "escalation.md"), join(skills, "escalation.md"));
    writeFileSync(join(skills, ".hidden"), "not a skill, no frontmatter");
    const config = loadDir(dir);
    expect([...config.skills.keys()].sort()).toEqual(["escalation", "oom"]);
    expect(config.skills.get("escalation")?.body).toBe("PAGE");
  });

  it("no skills directory: no skills, and the agents load", () => {
    const config = loadDir(configDir({ tarsy: tarsyYaml("  A: {}"), providers: PROVIDERS }));
    expect(config.skills.size).toBe(0);
    expect(stageAgent(config)).toMatchObject({ required_skills: [], on_demand_skills: [] });
  });

  it("a file without frontmatter, without a description, or a duplicate name is an error naming the file", () => {
    const dir = withSkillDirs(tarsyYaml("  A: {}"), {
      plain: "# just markdown\n",
      nodesc: "---\nname: nodesc\n---\nbody\n",
      first: skill("dup", "one", "1"),
      second: skill("dup", "two", "2"),
      broken: "---\nname: [unclosed\n---\nbody\n",
    });
    const issues = issuesOf(dir);
    expect(issues).toContainEqual({
      file: "skills/plain/SKILL.md",
      path: "",
      message: expect.stringContaining("has no YAML frontmatter"),
    });
    expect(issues).toContainEqual({
      file: "skills/nodesc/SKILL.md",
      path: "",
      message: expect.stringMatching(/"description".*needs name and description/),
    });
    expect(issues).toContainEqual({
      file: "skills/second/SKILL.md",
      path: "",
      message: expect.stringContaining(
        `skill name "dup" is also used by ${dir}/skills/first/SKILL.md`,
      ),
    });
    expect(issues).toContainEqual({
      file: "skills/broken/SKILL.md",
      path: "",
      message: expect.stringContaining("frontmatter is not valid YAML"),
    });
    expect(issues).toHaveLength(4);
  });
});

describe("skills of an agent", () => {
  it("skills unset: every skill is on demand; required ones move to the prompt", () => {
    const config = loadDir(withSkillDirs(tarsyYaml("  A:\n    required_skills: [escalation]")));
    const resolved = stageAgent(config);
    expect(resolved.required_skills).toEqual([
      { name: "escalation", description: "who to page", body: "ESCALATION-BODY" },
    ]);
    expect(names(resolved.on_demand_skills)).toEqual(["kubectl-basics", "oom"]);
  });

  it("skills: [] gives none; a list gives only those", () => {
    const none = stageAgent(loadDir(withSkillDirs(tarsyYaml("  A:\n    skills: []"))));
    expect(none).toMatchObject({ required_skills: [], on_demand_skills: [] });
    const some = stageAgent(
      loadDir(
        withSkillDirs(tarsyYaml("  A:\n    skills: [oom, escalation]\n    required_skills: [oom]")),
      ),
    );
    expect(names(some.required_skills)).toEqual(["oom"]);
    expect(names(some.on_demand_skills)).toEqual(["escalation"]);
  });

  it("a stage's agent reference replaces the definition's skills and required skills", () => {
    const config = loadDir(
      withSkillDirs(
        tarsyYaml(
          "  A:\n    skills: [oom]",
          "{ name: A, skills: [kubectl-basics, escalation], required_skills: [escalation] }",
        ),
      ),
    );
    const resolved = stageAgent(config);
    expect(names(resolved.required_skills)).toEqual(["escalation"]);
    expect(names(resolved.on_demand_skills)).toEqual(["kubectl-basics"]);
    // Chat resolves from the definition alone.
    const chat = resolveChatAgentConfig(config, config.chains.get("c") as never);
    expect(names(chat.on_demand_skills)).toEqual(["oom"]);
    expect(chat.required_skills).toEqual([]);
  });

  it("synthesis gets no skills", () => {
    const config = loadDir(withSkillDirs(tarsyYaml("  A: {}")));
    const synthesis = resolveSynthesisConfig(config, config.chains.get("c") as never, 0);
    expect(synthesis).toMatchObject({ required_skills: [], on_demand_skills: [] });
  });

  it("an unknown skill name is an error at its path", () => {
    const issues = issuesOf(
      withSkillDirs(
        tarsyYaml(
          "  A:\n    skills: [oom, nope]\n    required_skills: [missing]",
          "{ name: A, skills: [ghost] }",
        ),
      ),
    );
    expect(issues.map((i) => [i.path, i.message.split(" (")[0]])).toEqual([
      ["agents.A.skills[1]", 'unknown skill "nope"'],
      ["agents.A.required_skills[0]", 'unknown skill "missing"'],
      ["agent_chains.c.stages[0].agents[0].skills[0]", 'unknown skill "ghost"'],
    ]);
    expect(issues[0]?.message).toContain("available: escalation, kubectl-basics, oom");
  });

  it("a required skill outside the allowlist is an error, on the agent and on a stage reference", () => {
    const issues = withoutLines(
      issuesOf(
        withSkillDirs(
          tarsyYaml(
            "  A:\n    skills: [oom]\n    required_skills: [escalation]\n  B:\n    required_skills: [oom]",
            "{ name: B, skills: [escalation] }",
          ),
        ),
      ),
    );
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "agents.A.required_skills[0]",
        message: `required skill "escalation" is not in the agent's skills allowlist [oom]`,
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.stages[0].agents[0].skills[0]",
        message: `required skill "oom" (required by agent "B") is not in the agent's skills allowlist [escalation]`,
      },
    ]);
  });

  it("the config view lists the skills by name and description, never the bodies", () => {
    const view = configView(loadDir(withSkillDirs(tarsyYaml("  A: {}"))));
    expect(view.skills).toEqual([
      { name: "escalation", description: "who to page" },
      { name: "kubectl-basics", description: "kubectl know-how" },
      { name: "oom", description: "OOM triage" },
    ]);
    expect(JSON.stringify(view)).not.toContain("OOM-BODY");
  });

  it("the keys are acted on: no 'not supported yet' warning for them", () => {
    const { warnings } = loadConfig({
      configDir: withSkillDirs(
        tarsyYaml(
          "  A:\n    skills: [oom]\n    required_skills: [oom]",
          "{ name: A, skills: [oom] }",
        ),
      ),
      env: {},
    });
    expect(warnings.filter((w) => w.path.includes("skills"))).toEqual([]);
  });
});
