import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import type { ConfigIssue } from "./errors.ts";

export const SKILLS_DIR = "skills";
export const SKILL_FILE = "SKILL.md";

/** One parsed SKILL.md: the frontmatter's name and description, and the markdown after it. */
export interface SkillConfig {
  name: string;
  /** The catalog entry: what the agent reads to decide whether to load the skill. */
  description: string;
  body: string;
  /** The file it was read from. */
  file: string;
}

const FrontmatterSchema = z.object({
  name: z.string().trim().min(1, "must not be empty"),
  description: z.string().trim().min(1, "must not be empty"),
});

const FRONTMATTER_RE = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Splits `---\n<yaml>\n---\n<markdown>`: the skill, or what is wrong with the file. */
export function parseSkillFile(text: string, file: string): SkillConfig | ConfigIssue {
  const issue = (message: string): ConfigIssue => ({ file, path: "", message });
  const match = FRONTMATTER_RE.exec(text.replace(/^\uFEFF/, ""));
  if (!match) {
    return issue("has no YAML frontmatter (--- name, description --- before the markdown)");
  }
  let raw: unknown;
  try {
    raw = parse(match[1] ?? "");
  } catch (err) {
    return issue(`frontmatter is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const parsed = FrontmatterSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) =>
      i.path.length > 0 ? `"${i.path.join(".")}" ${i.message}` : i.message,
    );
    return issue(`frontmatter: ${problems.join("; ")} (needs name and description)`);
  }
  return {
    name: parsed.data.name,
    description: parsed.data.description,
    body: text.slice((match.index ?? 0) + match[0].length).trim(),
    file,
  };
}

/** The files holding skills: `<name>/SKILL.md` directories and flat files (ConfigMap keys). */
function skillFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    // Kubernetes mounts a ConfigMap with `..data` / `..2024_…` links beside the keys.
    if (entry.startsWith(".")) continue;
    const path = join(dir, entry);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isDirectory()) {
      const file = join(path, SKILL_FILE);
      if (existsSync(file)) files.push(file);
    } else if (stat.isFile()) {
      files.push(path);
    }
  }
  return files;
}

/**
 * Reads `<configDir>/skills/`: each `<name>/SKILL.md`, and each regular file directly in it
 * (a ConfigMap mount), skipping dotfiles. No directory means no skills. A file without the
 * frontmatter, or a name used twice, is an issue naming the file.
 */
export function loadSkills(configDir: string): {
  skills: Map<string, SkillConfig>;
  issues: ConfigIssue[];
} {
  const skills = new Map<string, SkillConfig>();
  const issues: ConfigIssue[] = [];
  const dir = join(configDir, SKILLS_DIR);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return { skills, issues };
  for (const file of skillFiles(dir)) {
    const parsed = parseSkillFile(readFileSync(file, "utf8"), file);
    if (!("name" in parsed)) {
      issues.push(parsed);
      continue;
    }
    const existing = skills.get(parsed.name);
    if (existing) {
      issues.push({
        file,
        path: "",
        message: `skill name "${parsed.name}" is also used by ${existing.file}`,
      });
      continue;
    }
    skills.set(parsed.name, parsed);
  }
  return { skills, issues };
}
