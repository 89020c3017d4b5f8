/**
 * The TARSy configuration an evaluation runs with: every MCP server of the catalog points at the
 * replay server (the execution id in a header), one investigating agent with all of them, a
 * default chain over the cases' alert types and a chain of its own for each case that overrides
 * it; the provider under test is the only LLM provider. In deterministic mode, the cases' scripts
 * become one llm-service script, each case's answers routed by its marker.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { z } from "zod";
import type { EvalCase } from "./case.ts";
import { HarnessError } from "./errors.ts";
import { EXECUTION_HEADER } from "./replay-server.ts";
import type { ServerCatalog } from "./servers.ts";

export const PROVIDER_TYPES = [
  "scripted",
  "google",
  "openai",
  "anthropic",
  "xai",
  "vertexai",
  "openai-compatible",
] as const;
export const ProviderTypeSchema = z.enum(PROVIDER_TYPES);
export type ProviderType = z.infer<typeof ProviderTypeSchema>;

export interface ProviderChoice {
  type: ProviderType;
  model: string;
  apiKeyEnv?: string | undefined;
  baseUrl?: string | undefined;
}

/** A default model per provider type, when `--model` is not given. */
export const DEFAULT_MODELS: Record<ProviderType, string> = {
  scripted: "scripted-eval",
  google: "gemini-2.5-pro",
  openai: "gpt-4.1",
  anthropic: "claude-sonnet-4-5",
  xai: "grok-4",
  vertexai: "gemini-2.5-pro",
  "openai-compatible": "default",
};

/** The variable llm-service reads a provider's key from when `--api-key-env` is not given. */
export const DEFAULT_KEY_ENVS: Partial<Record<ProviderType, string>> = {
  google: "GOOGLE_API_KEY",
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  xai: "XAI_API_KEY",
};

export const EVAL_AGENT = "EvalInvestigator";
export const EXEC_SUMMARY_AGENT = "ExecSummaryAgent";
/** The agent name of the LLM judge's requests (`--judge-provider`). */
export const JUDGE_AGENT = "EvalJudge";
const DEFAULT_CHAIN = "eval-investigation";

/**
 * What the scripted backend routes a case's answers by: put into the alert's data in
 * deterministic mode only (a real model never sees it), it is in every investigation request's
 * first user message.
 */
export function caseMarker(caseId: string): string {
  return `eval-case-${caseId}`;
}

export const MARKER_FIELD = "eval_case";

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** A script matcher for exactly this text: a substring, unless it reads as a `/regex/`. */
function literalMatcher(text: string): string {
  return /^\/.*\/[a-z]*$/s.test(text) ? `/${escapeRegex(text)}/` : text;
}

/**
 * One llm-service script for every case. A case's entries without a rule answer the requests
 * whose last user message carries its marker; its `ExecSummaryAgent` entries answer the executive
 * summary of its own final analysis (the summary's prompt carries that whole analysis, not the
 * alert), so two cases whose analyses begin alike still get their own summaries; so do its
 * `EvalJudge` entries, for a scripted LLM judge (its prompt carries the final analysis too).
 */
export function compileScript(cases: readonly EvalCase[]): unknown[] {
  const out: unknown[] = [];
  for (const c of cases) {
    const entries = (c.script ?? []) as Record<string, unknown>[];
    const final = [...entries]
      .reverse()
      .find((e) => !e.match && typeof e.text === "string" && !e.tool_calls);
    const finalText = typeof final?.text === "string" ? final.text.trim() : "";
    for (const entry of entries) {
      const match = entry.match as Record<string, unknown> | undefined;
      if (!match) {
        out.push({ ...entry, match: { user: caseMarker(c.id) } });
      } else if ((match.agent === EXEC_SUMMARY_AGENT || match.agent === JUDGE_AGENT) && finalText) {
        out.push({
          ...entry,
          match: {
            agent: `/^${match.agent}$/`,
            user: literalMatcher(finalText),
          },
        });
      } else {
        out.push({ ...entry, match: { ...match, user: caseMarker(c.id) } });
      }
    }
  }
  // A case without a scripted summary still gets one, so its session is not marked by a failure.
  out.push({
    match: { agent: `/^${EXEC_SUMMARY_AGENT}$/` },
    text: "No executive summary was scripted for this case.",
    repeat: true,
  });
  return out;
}

export interface GeneratedConfig {
  dir: string;
  scriptPath: string | undefined;
}

export function writeEvalConfig(
  dir: string,
  cases: readonly EvalCase[],
  catalog: ServerCatalog,
  /** The replay server's URL of each MCP server. */
  urlOf: (server: string) => string,
  provider: ProviderChoice,
  options: { concurrency: number; maxIterations: number; sessionTimeout: string },
): GeneratedConfig {
  mkdirSync(dir, { recursive: true });
  const servers = Object.keys(catalog.servers);
  const mcp_servers = Object.fromEntries(
    servers.map((name) => [
      name,
      {
        transport: {
          type: "http",
          url: urlOf(name),
          custom_headers: { [EXECUTION_HEADER]: "{{.SESSION_ID}}" },
        },
        instructions: catalog.servers[name]?.instructions ?? "",
      },
    ]),
  );

  const overridden = cases.filter((c) => c.chain);
  const defaultTypes = [...new Set(cases.filter((c) => !c.chain).map((c) => c.alert_type))].sort();
  const chains: Record<string, unknown> = {};
  if (defaultTypes.length > 0) {
    chains[DEFAULT_CHAIN] = {
      alert_types: defaultTypes,
      description: "Evaluation: one agent investigates with the recorded tools",
      stages: [{ name: "investigate", agents: [{ name: EVAL_AGENT }] }],
    };
  }
  const claimed = new Set(defaultTypes);
  for (const c of overridden) {
    if (claimed.has(c.alert_type)) {
      throw new HarnessError(
        "chain_conflict",
        `case ${c.id}: its chain override needs an alert type no other case uses (${c.alert_type})`,
      );
    }
    claimed.add(c.alert_type);
    chains[`eval-${c.id}`] = { alert_types: [c.alert_type], stages: c.chain?.stages };
  }

  // Runbook files of the cases are served by the harness on loopback: let TARSy fetch them.
  const localRunbooks = cases.some((c) => c.runbookText !== undefined);
  const tarsy = {
    ...(localRunbooks && {
      system: {
        runbooks: {
          allowed_domains: ["github.com", "raw.githubusercontent.com", "127.0.0.1"],
          allow_private_addresses: true,
        },
      },
    }),
    queue: {
      max_concurrent_sessions: options.concurrency,
      session_timeout: options.sessionTimeout,
    },
    defaults: {
      llm_provider: "eval",
      max_iterations: options.maxIterations,
      alert_type: cases[0]?.alert_type ?? "Eval",
      alert_masking: { enabled: false },
    },
    mcp_servers,
    agents: {
      [EVAL_AGENT]: {
        mcp_servers: servers,
        custom_instructions:
          "Investigate the alert with the cluster's tools. End with the root cause, the evidence " +
          "that shows it, and the fix.",
      },
    },
    agent_chains: chains,
  };
  const llmProvider: Record<string, unknown> = {
    type: provider.type,
    model: provider.model,
    max_tool_result_tokens: 100_000,
  };
  if (provider.apiKeyEnv) llmProvider.api_key_env = provider.apiKeyEnv;
  if (provider.baseUrl) llmProvider.base_url = provider.baseUrl;

  writeFileSync(
    join(dir, "tarsy.yaml"),
    `# Generated by @tarsy/evals for one run.\n${stringify(tarsy)}`,
  );
  writeFileSync(
    join(dir, "llm-providers.yaml"),
    `# Generated by @tarsy/evals for one run.\n${stringify({ llm_providers: { eval: llmProvider } })}`,
  );
  let scriptPath: string | undefined;
  if (provider.type === "scripted") {
    scriptPath = join(dir, "llm-script.yaml");
    writeFileSync(scriptPath, stringify({ responses: compileScript(cases) }));
  }
  return { dir, scriptPath };
}
