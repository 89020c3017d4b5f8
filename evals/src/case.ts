import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

/** A finding the judge looks for: what it means, and for the deterministic judge the words that prove it. */
export const FindingSchema = z.strictObject({
  /** The claim in plain words (what an LLM judge is asked about). */
  finding: z.string().min(1),
  /**
   * Deterministic judge: the finding is present when any of these occurs in the final analysis
   * or the executive summary (case-insensitive substring, or `/regex/flags`).
   */
  match: z.array(z.string().min(1)).min(1),
});
export type Finding = z.infer<typeof FindingSchema>;

/** `case.yaml`: the alert, what a good investigation must find, and what it must not claim. */
export const CaseFileSchema = z.strictObject({
  description: z.string().min(1),
  alert_type: z.string().min(1),
  /** The alert's payload, as `POST /api/v1/alerts` takes it in `data`. */
  data: z.record(z.string(), z.unknown()),
  /**
   * A runbook sent with the alert: an http(s) URL (checked against
   * `system.runbooks.allowed_domains`), or a file of the case's folder, which the harness serves
   * over loopback (so a case runs offline).
   */
  runbook: z.string().min(1).optional(),
  /** The stages of a chain of its own (TARSy's `agent_chains.<id>.stages`), instead of the default one. */
  chain: z.strictObject({ stages: z.array(z.record(z.string(), z.unknown())).min(1) }).optional(),
  tags: z.array(z.string().regex(/^[a-z0-9][a-z0-9-]*$/)).default([]),
  expected_findings: z.array(FindingSchema).min(1),
  forbidden_findings: z.array(FindingSchema).default([]),
  /** `server.tool` names a good investigation calls. */
  expected_tools: z.array(z.string().regex(/^[\w-]+\.[\w-]+$/)).default([]),
});
export type CaseFile = z.infer<typeof CaseFileSchema>;

/** One line of `tools.jsonl`: a recorded MCP tool call. */
export const RecordingSchema = z
  .strictObject({
    server: z.string().min(1),
    tool: z.string().min(1),
    /** A subset of the call's arguments that must be equal for this recording to answer it. */
    args: z.record(z.string(), z.unknown()).default({}),
    /** The tool's text (a string) or JSON output. */
    result: z
      .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .optional(),
    /** The tool failed with this message. */
    error: z.string().optional(),
  })
  .refine((r) => (r.result === undefined) !== (r.error === undefined), {
    message: "a recording has exactly one of result and error",
  });
export type Recording = z.infer<typeof RecordingSchema>;

export interface EvalCase extends CaseFile {
  id: string;
  dir: string;
  recordings: Recording[];
  /** The scripted LLM answers (llm-service script format), for deterministic mode. */
  script: unknown[] | undefined;
  /** The text of a runbook given as a file of the case's folder (undefined: none, or a URL). */
  runbookText: string | undefined;
}

/** Whether a case's `runbook` is a URL (else a file of its folder). */
export function isRunbookUrl(runbook: string): boolean {
  return /^https?:\/\//i.test(runbook);
}

export class CaseLoadError extends Error {
  readonly code = "case_invalid" as const;
  constructor(
    message: string,
    readonly caseDir: string,
    options?: ErrorOptions,
  ) {
    super(`${caseDir}: ${message}`, options);
    this.name = "CaseLoadError";
  }
}

function issuesOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
}

const ScriptFileSchema = z.union([
  z.array(z.record(z.string(), z.unknown())),
  z.strictObject({ responses: z.array(z.record(z.string(), z.unknown())) }),
]);

export function loadCase(dir: string, id: string): EvalCase {
  const casePath = join(dir, "case.yaml");
  if (!existsSync(casePath)) throw new CaseLoadError("no case.yaml", dir);
  const parsed = CaseFileSchema.safeParse(parseYaml(readFileSync(casePath, "utf8")));
  if (!parsed.success) throw new CaseLoadError(`case.yaml: ${issuesOf(parsed.error)}`, dir);

  const recordings: Recording[] = [];
  const toolsPath = join(dir, "tools.jsonl");
  if (existsSync(toolsPath)) {
    const lines = readFileSync(toolsPath, "utf8").split("\n");
    for (const [index, line] of lines.entries()) {
      if (!line.trim()) continue;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (err) {
        throw new CaseLoadError(`tools.jsonl line ${index + 1}: not JSON`, dir, { cause: err });
      }
      const rec = RecordingSchema.safeParse(json);
      if (!rec.success)
        throw new CaseLoadError(`tools.jsonl line ${index + 1}: ${issuesOf(rec.error)}`, dir);
      recordings.push(rec.data);
    }
  }

  let script: unknown[] | undefined;
  const scriptPath = join(dir, "llm-script.yaml");
  if (existsSync(scriptPath)) {
    const s = ScriptFileSchema.safeParse(parseYaml(readFileSync(scriptPath, "utf8")));
    if (!s.success) throw new CaseLoadError(`llm-script.yaml: ${issuesOf(s.error)}`, dir);
    script = Array.isArray(s.data) ? s.data : s.data.responses;
  }
  let runbookText: string | undefined;
  const runbook = parsed.data.runbook;
  if (runbook !== undefined && !isRunbookUrl(runbook)) {
    const runbookPath = join(dir, runbook);
    if (!existsSync(runbookPath)) {
      throw new CaseLoadError(`runbook: neither a URL nor a file of the case (${runbook})`, dir);
    }
    runbookText = readFileSync(runbookPath, "utf8");
  }
  return { ...parsed.data, id, dir, recordings, script, runbookText };
}

/** Every case under `root` (one folder each), sorted by id. */
export function loadCases(root: string): EvalCase[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .map((id) => loadCase(join(root, id), id));
}
