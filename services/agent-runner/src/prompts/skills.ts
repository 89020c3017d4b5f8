import type { ResolvedSkill } from "@tarsy/config";

/** Tier 2.5: the required skills' bodies, as pre-loaded reference material. */
export function preloadedSkillsSection(skills: readonly ResolvedSkill[]): string | undefined {
  if (skills.length === 0) return undefined;
  const sections = skills.map((skill) => `### ${skill.name}\n\n${skill.body.trim()}`);
  return `## Pre-loaded Skills\n\n${sections.join("\n\n")}`;
}

/** `- **name**: description` lines (the catalog, and `load_skill`'s notes). */
export function skillCatalogLines(skills: readonly ResolvedSkill[]): string {
  return skills.map((skill) => `- **${skill.name}**: ${skill.description}`).join("\n");
}

/** Tier 2.6: the skills the agent can load with `load_skill`, and when to. */
export function skillCatalogSection(skills: readonly ResolvedSkill[]): string | undefined {
  if (skills.length === 0) return undefined;
  return `## Available Skills

Skills provide domain-specific knowledge that may help with your task.
The following additional skills can be loaded on demand using the \`load_skill\` tool.
Scan the descriptions and decide:
- If one or more match your task: load them before proceeding.
- If none match: skip and proceed without them.

<available_skills>
${skillCatalogLines(skills)}
</available_skills>`;
}
