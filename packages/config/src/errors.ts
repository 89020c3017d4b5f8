import type { ConfigWarning } from "./types.ts";

/** One problem found while loading the configuration: where it is and what is wrong. */
export interface ConfigIssue {
  /** The file the problem is in (`<built-in>` for built-in definitions). */
  file: string;
  /** Dotted path inside the file, e.g. `agent_chains.k8s.stages[0].agents[1].name`. */
  path: string;
  message: string;
  /** The file line (1-based) of what the path points at, where it is known. */
  line?: number;
}

export function formatIssue(issue: ConfigIssue): string {
  const file = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}`;
  return issue.path ? `${file}: ${issue.path}: ${issue.message}` : `${file}: ${issue.message}`;
}

/** Base of every error this package throws. */
export abstract class TarsyConfigError extends Error {
  abstract readonly code: string;
}

/** Loading failed; `issues` lists every problem found, not just the first. */
export class ConfigError extends TarsyConfigError {
  readonly code = "config_invalid" as const;
  constructor(
    readonly issues: readonly ConfigIssue[],
    /** What would have been warned about had the configuration loaded (shown with the errors). */
    readonly warnings: readonly ConfigWarning[] = [],
  ) {
    super(
      `invalid configuration (${issues.length} problem${issues.length === 1 ? "" : "s"}):\n  ${issues
        .map(formatIssue)
        .join("\n  ")}`,
    );
    this.name = "ConfigError";
  }
}

/** No chain handles the alert type (and the default alert type did not help). */
export class ChainNotFoundError extends TarsyConfigError {
  readonly code = "chain_not_found" as const;
  constructor(readonly alertType: string) {
    super(`no chain handles alert type "${alertType}"`);
    this.name = "ChainNotFoundError";
  }
}

export type ReferenceKind =
  | "agent"
  | "chain"
  | "stage"
  | "llm_provider"
  | "mcp_server"
  | "fallback_list";

/** A name used at run time is not in the loaded registries. */
export class UnknownReferenceError extends TarsyConfigError {
  readonly code = "unknown_reference" as const;
  constructor(
    readonly kind: ReferenceKind,
    readonly names: readonly string[],
    context: string,
  ) {
    super(`${context}: unknown ${kind} ${names.map((n) => `"${n}"`).join(", ")}`);
    this.name = "UnknownReferenceError";
  }
}

/** A chat was requested for a chain whose chat is disabled. */
export class ChatDisabledError extends TarsyConfigError {
  readonly code = "chat_disabled" as const;
  constructor(readonly chainId: string) {
    super(`chat is disabled for chain "${chainId}"`);
    this.name = "ChatDisabledError";
  }
}
