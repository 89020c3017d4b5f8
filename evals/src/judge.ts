/**
 * The judge: for each expected finding, whether the investigation's output states it (with the
 * evidence), and for each forbidden one, whether it claims it. Deterministic mode matches each
 * finding's substrings / regexes; with a provider, an LLM reads the output through llm-service.
 */

import type { LlmClient, LlmConfig } from "@tarsy/llm-client";
import { z } from "zod";
import type { Finding } from "./case.ts";
import { JUDGE_AGENT } from "./config.ts";
import { HarnessError } from "./errors.ts";

export const VerdictSchema = z.object({
  finding: z.string(),
  present: z.boolean(),
  evidence: z.string(),
});
export type Verdict = z.infer<typeof VerdictSchema>;

export interface Judgement {
  judge: string;
  expected: Verdict[];
  forbidden: Verdict[];
}

export interface JudgeInput {
  caseId: string;
  finalAnalysis: string;
  executiveSummary: string;
  expected: readonly Finding[];
  forbidden: readonly Finding[];
}

export interface Judge {
  readonly name: string;
  judge(input: JudgeInput): Promise<Judgement>;
}

function toRegex(pattern: string): RegExp {
  const m = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  if (m?.[1]) return new RegExp(m[1], m[2]?.includes("i") ? m[2] : `${m[2] ?? ""}i`);
  return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
}

/** The sentence (or line) around a match: what a reader checks the verdict against. */
function around(text: string, index: number, length: number): string {
  const start = Math.max(0, text.lastIndexOf("\n", index) + 1, index - 120);
  const endLine = text.indexOf("\n", index + length);
  const end = Math.min(endLine === -1 ? text.length : endLine, index + length + 120);
  return text.slice(start, end).trim();
}

export function matchFinding(finding: Finding, text: string): Verdict {
  for (const pattern of finding.match) {
    const found = toRegex(pattern).exec(text);
    if (found) {
      return {
        finding: finding.finding,
        present: true,
        evidence: around(text, found.index, found[0].length),
      };
    }
  }
  return { finding: finding.finding, present: false, evidence: "" };
}

export function createDeterministicJudge(): Judge {
  return {
    name: "deterministic",
    async judge(input) {
      const text = `${input.finalAnalysis}\n${input.executiveSummary}`;
      return {
        judge: "deterministic",
        expected: input.expected.map((f) => matchFinding(f, text)),
        forbidden: input.forbidden.map((f) => matchFinding(f, text)),
      };
    },
  };
}

const LlmVerdictsSchema = z.object({
  expected: z.array(VerdictSchema),
  forbidden: z.array(VerdictSchema),
});

export const JUDGE_SYSTEM_PROMPT = `You grade an SRE investigation of an alert. You get its final analysis and
executive summary, and two lists of claims. For each EXPECTED claim, say whether the investigation
states it (same meaning, any wording) and quote the sentence that shows it as evidence. For each
FORBIDDEN claim, say whether the investigation asserts it (mentioning it only to rule it out is not
asserting). Answer with JSON only, no prose, no code fence:
{"expected":[{"finding":"…","present":true,"evidence":"…"}],"forbidden":[{"finding":"…","present":false,"evidence":""}]}
Keep each finding's text exactly as given and the lists in the given order.`;

export function judgeUserPrompt(input: JudgeInput): string {
  const list = (fs: readonly Finding[]) => fs.map((f, i) => `${i + 1}. ${f.finding}`).join("\n");
  return `## Final analysis
${input.finalAnalysis}

## Executive summary
${input.executiveSummary}

## EXPECTED claims
${list(input.expected) || "(none)"}

## FORBIDDEN claims
${list(input.forbidden) || "(none)"}`;
}

/** The JSON object in a model's answer (a code fence or prose around it is tolerated). */
export function parseVerdicts(text: string): z.infer<typeof LlmVerdictsSchema> {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end <= start)
    throw new HarnessError("judge_failed", "the judge answered no JSON object");
  return LlmVerdictsSchema.parse(JSON.parse(text.slice(start, end + 1)));
}

export function createLlmJudge(client: LlmClient, config: LlmConfig): Judge {
  const name = `llm:${config.provider}/${config.model ?? ""}`;
  return {
    name,
    async judge(input) {
      let text = "";
      for await (const chunk of client.generate({
        sessionId: `eval-judge-${input.caseId}`,
        agentName: JUDGE_AGENT,
        messages: [
          { role: "system", content: JUDGE_SYSTEM_PROMPT },
          { role: "user", content: judgeUserPrompt(input) },
        ],
        config,
      })) {
        if (chunk.type === "text") text += chunk.content;
        if (chunk.type === "error")
          throw new HarnessError("judge_failed", `judge LLM error: ${chunk.message}`);
      }
      const verdicts = parseVerdicts(text);
      // Verdicts are taken by position: a model that renames a finding still answers for it.
      const pick = (fs: readonly Finding[], got: Verdict[]) =>
        fs.map((f, i) => ({
          finding: f.finding,
          present: got[i]?.present ?? false,
          evidence: got[i]?.evidence ?? "",
        }));
      return {
        judge: name,
        expected: pick(input.expected, verdicts.expected),
        forbidden: pick(input.forbidden, verdicts.forbidden),
      };
    },
  };
}
