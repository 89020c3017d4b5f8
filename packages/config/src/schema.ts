import { NOTIFICATION_EVENTS } from "@tarsy/contracts";
import { z } from "zod";
import { parseDuration } from "./duration.ts";
import { LabelMapSelectorSchema } from "./labels.ts";
import {
  customPatternProblem,
  isKnownMaskingPattern,
  isKnownPatternGroup,
} from "./masking-names.ts";
import { McpAuthSchema } from "./mcp-auth.ts";
import { toolPatternProblem } from "./tool-class.ts";
import {
  AGENT_TYPES,
  ITERATION_STRATEGIES,
  LLM_BACKENDS,
  LLM_PROVIDER_TYPES,
  REASONING_EFFORTS,
  SUCCESS_POLICIES,
  TRANSPORT_TYPES,
} from "./types.ts";

/**
 * zod schemas of the YAML as users write it (TARSy's format). Objects are strict: an
 * unrecognised key becomes a warning (see `parse.ts`), never a silent typo.
 */

const DURATION_HINT = "expected a duration such as 500ms, 30s, 40m or 1h";

export const DurationSchema = z
  .union([z.string(), z.literal(0)], { error: DURATION_HINT })
  .transform((value, ctx) => {
    const ms = typeof value === "number" ? 0 : parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({ code: "custom", message: `invalid duration "${value}": ${DURATION_HINT}` });
      return z.NEVER;
    }
    return ms;
  });

const PositiveDurationSchema = DurationSchema.refine((ms) => ms > 0, {
  error: "must be longer than 0",
});

/** `timeout: 30` (seconds, as TARSy writes it) or a duration string. */
const SecondsOrDurationSchema = z
  .union([z.number().positive(), z.string()], { error: DURATION_HINT })
  .transform((value, ctx) => {
    const ms = typeof value === "number" ? Math.round(value * 1000) : parseDuration(value);
    if (ms === undefined || ms <= 0) {
      ctx.addIssue({ code: "custom", message: `invalid timeout "${value}": ${DURATION_HINT}` });
      return z.NEVER;
    }
    return ms;
  });

const PositiveInt = z.number().int().min(1);
const Name = z.string().min(1, "must not be empty");
const NameList = z.array(Name);
const Backend = z.enum(LLM_BACKENDS);
const Strategy = z.enum(ITERATION_STRATEGIES);
/** Values of env and header maps: YAML may type `PORT: 3000` as a number. */
const StringMap = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean()]).transform((v) => String(v)),
);

/**
 * `fallback_providers`: LLM providers to switch to, in order, when the current one keeps
 * failing. Each entry names a provider and the backend to drive it with. At every level the
 * most specific list wins; `[]` turns fallback off below a level that has one.
 */
const FallbackProvidersSchema = z.array(
  z.strictObject({ provider: Name, backend: Backend.default("langchain") }),
);

/**
 * `fallback_list`: the name of a `fallback_lists` entry. Empty means unset (the level inherits);
 * the name is checked against the catalog once the whole configuration is loaded.
 */
const FallbackListSelector = z
  .string()
  .optional()
  .transform((name) => (name ? name : undefined));

/** A level sets `fallback_list` or the deprecated `fallback_providers`, never both. */
function oneFallbackSelector(
  node: { fallback_list?: string | undefined; fallback_providers?: unknown },
  ctx: z.core.$RefinementCtx,
): void {
  if (node.fallback_list !== undefined && node.fallback_providers !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["fallback_list"],
      message:
        "set either fallback_list or the deprecated fallback_providers on one level, not both",
    });
  }
}

const PAIRING_KEYS = ["llm_provider", "llm_backend"] as const;
/** The keys written where `llm_provider`/`llm_backend` belong (the deprecated list's spelling). */
const PAIRING_HINTS: Readonly<Record<string, string>> = {
  provider: "llm_provider",
  backend: "llm_backend",
};

/** Unknown keys of a pairing node are errors, with a hint for the deprecated list's spelling. */
function pairingKeys(allowed: readonly string[]) {
  return (node: Record<string, unknown>, ctx: z.core.$RefinementCtx) => {
    for (const key of Object.keys(node)) {
      if (allowed.includes(key)) continue;
      const hint = PAIRING_HINTS[key];
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: hint ? `unknown key "${key}": did you mean ${hint}?` : `unknown key "${key}"`,
      });
    }
  };
}

/** One entry of a `fallback_lists` list: a provider and the backend that drives it. */
const FallbackListEntrySchema = z
  .looseObject({ llm_provider: Name.optional(), llm_backend: Backend.default("langchain") })
  .superRefine((entry, ctx) => {
    pairingKeys(PAIRING_KEYS)(entry, ctx);
    if (entry.llm_provider === undefined && !("provider" in entry)) {
      ctx.addIssue({ code: "custom", path: ["llm_provider"], message: "is required" });
    }
  })
  .transform(({ llm_provider, llm_backend }) => ({
    llm_provider: llm_provider ?? "",
    llm_backend,
  }));

/** The top-level `fallback_lists` catalog: name → ordered entries (`[]`: no fallback). */
export const FallbackListsSchema = z.record(
  Name,
  z
    .array(FallbackListEntrySchema, { error: "expected a list of {llm_provider, llm_backend}" })
    .nullable(),
);
export type RawFallbackLists = z.output<typeof FallbackListsSchema>;

/** `defaults.agents.<name>`: a named agent's model and fallback list. */
const AgentPairingSchema = z
  .looseObject({
    llm_provider: Name.optional(),
    llm_backend: Backend.optional(),
    fallback_list: FallbackListSelector,
  })
  .superRefine(pairingKeys([...PAIRING_KEYS, "fallback_list"]))
  .transform(({ llm_provider, llm_backend, fallback_list }) => ({
    llm_provider,
    llm_backend,
    fallback_list,
  }));

/**
 * The executive summary's model and list, as the Go TARSy now writes it (`executive_summary:
 * {llm_provider, llm_backend, fallback_list}`); the flat `executive_summary_provider` /
 * `_backend` / `_fallback_list` keys are the same settings, and one node may not use both.
 */
const JobPairingSchema = AgentPairingSchema;

function oneExecutiveSummarySpelling(
  node: {
    executive_summary?: unknown;
    executive_summary_provider?: string | undefined;
    executive_summary_backend?: string | undefined;
    executive_summary_fallback_list?: string | undefined;
  },
  ctx: z.core.$RefinementCtx,
): void {
  const flat =
    node.executive_summary_provider ??
    node.executive_summary_backend ??
    node.executive_summary_fallback_list;
  if (node.executive_summary !== undefined && flat !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["executive_summary"],
      message:
        "set either executive_summary or executive_summary_provider / executive_summary_backend / executive_summary_fallback_list, not both",
    });
  }
}

/** Checks of a node that may choose a fallback walk and an executive-summary pairing. */
function chainLevelRefinements(
  node: Parameters<typeof oneFallbackSelector>[0] &
    Parameters<typeof oneExecutiveSummarySpelling>[0],
  ctx: z.core.$RefinementCtx,
): void {
  oneFallbackSelector(node, ctx);
  oneExecutiveSummarySpelling(node, ctx);
}

/** `defaults.summarization`: the model that summarizes large tool results, and its list. */
const DefaultSummarizationSchema = z.strictObject({
  llm_provider: Name.optional(),
  llm_backend: Backend.optional(),
  fallback_list: FallbackListSelector,
});

const NativeToolsSchema = z.strictObject({
  google_search: z.boolean().optional(),
  code_execution: z.boolean().optional(),
  url_context: z.boolean().optional(),
});

const TransportSchema = z
  .strictObject({
    type: z.enum(TRANSPORT_TYPES),
    command: z.string().optional(),
    args: z.array(z.union([z.string(), z.number()]).transform((v) => String(v))).optional(),
    env: StringMap.optional(),
    url: z.string().optional(),
    bearer_token: z.string().optional(),
    verify_ssl: z.boolean().optional(),
    timeout: SecondsOrDurationSchema.optional(),
    custom_headers: StringMap.optional(),
    /** TARSy's older name for `custom_headers`. */
    headers: StringMap.optional(),
    /** DELETE target when an execution's session closes; `{{.SESSION_ID}}` is its id. */
    session_cleanup_url: z.string().optional(),
  })
  .superRefine((t, ctx) => {
    if (t.type === "stdio") {
      if (!t.command) {
        ctx.addIssue({
          code: "custom",
          path: ["command"],
          message: "is required for stdio transport",
        });
      }
      return;
    }
    if (!t.url) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: `is required for ${t.type} transport`,
      });
    } else if (!URL.canParse(t.url)) {
      ctx.addIssue({ code: "custom", path: ["url"], message: `"${t.url}" is not a valid URL` });
    }
  });

const CustomPatternSchema = z
  .strictObject({
    name: z.string().min(1).optional(),
    pattern: Name,
    replacement: z.string(),
    description: z.string().optional(),
  })
  .superRefine((p, ctx) => {
    const problem = customPatternProblem(p.name ?? "custom_pattern", p.pattern, p.replacement);
    if (problem) ctx.addIssue({ code: "custom", path: ["pattern"], message: problem });
  });

const DataMaskingSchema = z.strictObject({
  /** A `data_masking` block means masking unless it says `enabled: false`. */
  enabled: z.boolean().default(true),
  pattern_groups: z
    .array(
      Name.refine(isKnownPatternGroup, {
        error: (issue) => `unknown masking pattern group "${String(issue.input)}"`,
      }),
    )
    .default([]),
  patterns: z
    .array(
      Name.refine(isKnownMaskingPattern, {
        error: (issue) => `unknown masking pattern "${String(issue.input)}"`,
      }),
    )
    .default([]),
  custom_patterns: z.array(CustomPatternSchema).default([]),
});

export const SUMMARIZATION_DEFAULTS = {
  enabled: true,
  size_threshold_tokens: 5000,
  summary_max_token_limit: 1000,
} as const;

const SummarizationSchema = z.strictObject({
  enabled: z.boolean().default(SUMMARIZATION_DEFAULTS.enabled),
  size_threshold_tokens: z
    .number()
    .int()
    .min(100)
    .default(SUMMARIZATION_DEFAULTS.size_threshold_tokens),
  summary_max_token_limit: z
    .number()
    .int()
    .min(50)
    .default(SUMMARIZATION_DEFAULTS.summary_max_token_limit),
  /** The model that summarizes this server's results (over `defaults.summarization`). */
  llm_provider: Name.optional(),
  llm_backend: Backend.optional(),
});

export const McpServerSchema = z.strictObject({
  enabled: z.boolean().optional(),
  transport: TransportSchema,
  instructions: z.string().optional(),
  data_masking: DataMaskingSchema.optional(),
  summarization: SummarizationSchema.optional(),
  auth: McpAuthSchema.optional(),
  /**
   * Initialized sessions (stdio: started processes) mcp-gateway keeps ready for the next
   * executions, each handed to one execution only. Unset: the gateway's MCP_WARM_POOL_SIZE.
   */
  warm_pool: z.number().int().min(0).max(16).optional(),
  /**
   * Whether the server's tools may run twice: `false` means a call cut off by a runner crash
   * is not repeated when the execution resumes (the agent is told it may or may not have run).
   */
  idempotent: z.boolean().optional(),
  /**
   * Tool classes over the server's own annotations: a tool name or glob (`delete_*`) → whether
   * the tool is mutating. A tool neither annotated nor named here counts as mutating.
   */
  tools: z
    .record(
      z.string().min(1),
      z
        .strictObject({
          mutating: z.boolean(),
          /**
           * The dry-run form of a mutating tool's call, run when its approval is requested and
           * shown on the request: `tool` (default: the same tool) with the call's arguments and
           * `arguments` over them (e.g. `{ dryRun: "All" }` for a server-side dry run). It must
           * not change anything: it runs without approval.
           */
          dry_run: z
            .strictObject({
              tool: z.string().min(1).optional(),
              arguments: z.record(z.string(), z.unknown()).default({}),
            })
            .optional(),
        })
        .refine((entry) => entry.dry_run === undefined || entry.mutating, {
          error: "dry_run is for mutating tools (mutating: true)",
          path: ["dry_run"],
        }),
    )
    .optional()
    .superRefine((tools, ctx) => {
      for (const pattern of Object.keys(tools ?? {})) {
        const problem = toolPatternProblem(pattern);
        if (problem) ctx.addIssue({ code: "custom", path: [pattern], message: problem });
      }
    }),
});
export type RawMcpServer = z.output<typeof McpServerSchema>;

/**
 * `sub_agents`: agents an agent may dispatch. Each item is a name (short form) or an object
 * with overrides for that dispatch (long form); both may be mixed in one list.
 */
const SubAgentRefSchema = z.preprocess(
  (value) => (typeof value === "string" ? { name: value } : value),
  z.strictObject(
    {
      name: Name,
      llm_provider: Name.optional(),
      llm_backend: Backend.optional(),
      fallback_list: FallbackListSelector,
      max_iterations: PositiveInt.optional(),
      mcp_servers: NameList.optional(),
      skills: NameList.optional(),
      required_skills: NameList.optional(),
    },
    { error: "expected an agent name or an object with a name" },
  ),
);
const SubAgentsSchema = z.array(SubAgentRefSchema, {
  error: "expected a list of agent names or {name, ...} objects",
});
export type RawSubAgentRef = z.output<typeof SubAgentRefSchema>;

/** Guardrails of an agent that dispatches sub-agents (defaults and per agent). */
const OrchestratorSchema = z.strictObject({
  max_concurrent_agents: PositiveInt.optional(),
  /** Cap of each sub-agent's run (unset: the parent's remaining time). */
  agent_timeout: PositiveDurationSchema.optional(),
  /** Total time of all sub-agent runs (unset: no total cap). */
  max_budget: PositiveDurationSchema.optional(),
});
export type RawOrchestrator = z.output<typeof OrchestratorSchema>;

/** The Go TARSy's agent kinds (`type`); an unknown value is an error, as there. */
const AgentTypeSchema = z.enum(AGENT_TYPES);

/**
 * An action agent's mutating calls: `required` (default) waits for a person's approval of each
 * one; `auto` runs them at once (each is still recorded and audited).
 */
const ApprovalSettingSchema = z.enum(["required", "auto"]);

/** `defaults.approval`: how long a request waits (then counts as denied), and four eyes. */
const ApprovalDefaultsSchema = z.strictObject({
  timeout: PositiveDurationSchema.optional(),
  four_eyes: z.boolean().optional(),
});
export type RawApprovalDefaults = z.output<typeof ApprovalDefaultsSchema>;

export const AgentSchema = z.strictObject({
  description: z.string().optional(),
  approval: ApprovalSettingSchema.optional(),
  /** How long its requests wait for a decision (over `defaults.approval.timeout`). */
  approval_timeout: PositiveDurationSchema.optional(),
  mcp_servers: NameList.default([]),
  custom_instructions: z.string().optional(),
  llm_backend: Backend.optional(),
  iteration_strategy: Strategy.optional(),
  max_iterations: PositiveInt.optional(),
  native_tools: NativeToolsSchema.optional(),
  type: AgentTypeSchema.optional(),
  skills: NameList.optional(),
  required_skills: NameList.optional(),
  sub_agents: SubAgentsSchema.optional(),
  orchestrator: OrchestratorSchema.optional(),
});
export type RawAgent = z.output<typeof AgentSchema>;

const StageAgentSchema = z.preprocess(
  (value) => (typeof value === "string" ? { name: value } : value),
  z
    .strictObject({
      name: Name,
      llm_provider: Name.optional(),
      llm_backend: Backend.optional(),
      iteration_strategy: Strategy.optional(),
      max_iterations: PositiveInt.optional(),
      mcp_servers: NameList.optional(),
      fallback_list: FallbackListSelector,
      fallback_providers: FallbackProvidersSchema.optional(),
      type: AgentTypeSchema.optional(),
      skills: NameList.optional(),
      required_skills: NameList.optional(),
      sub_agents: SubAgentsSchema.optional(),
    })
    .superRefine(oneFallbackSelector),
);

const SynthesisSchema = z.strictObject({
  agent: Name.optional(),
  llm_backend: Backend.optional(),
  iteration_strategy: Strategy.optional(),
  llm_provider: Name.optional(),
  fallback_list: FallbackListSelector,
});

const StageSchema = z
  .strictObject({
    name: Name,
    /** TARSy's older single-agent form: `agent: KubernetesAgent`. */
    agent: Name.optional(),
    agents: z.array(StageAgentSchema).min(1, "must list at least one agent").optional(),
    replicas: PositiveInt.default(1),
    success_policy: z.enum(SUCCESS_POLICIES).optional(),
    max_iterations: PositiveInt.optional(),
    iteration_timeout: DurationSchema.optional(),
    synthesis: SynthesisSchema.optional(),
    fallback_list: FallbackListSelector,
    fallback_providers: FallbackProvidersSchema.optional(),
    sub_agents: SubAgentsSchema.optional(),
  })
  .superRefine((stage, ctx) => {
    oneFallbackSelector(stage, ctx);
    if (!stage.agents && !stage.agent) {
      ctx.addIssue({ code: "custom", path: ["agents"], message: "is required" });
    }
    if (stage.agents && stage.agent) {
      ctx.addIssue({ code: "custom", path: ["agent"], message: "use either agent or agents" });
    }
    if (stage.replicas > 1 && (stage.agents?.length ?? 1) > 1) {
      ctx.addIssue({
        code: "custom",
        path: ["replicas"],
        message: "replicas can only be used with a single agent",
      });
    }
  });

const ChatSchema = z.strictObject({
  enabled: z.boolean().default(true),
  agent: Name.optional(),
  llm_backend: Backend.optional(),
  iteration_strategy: Strategy.optional(),
  llm_provider: Name.optional(),
  mcp_servers: NameList.optional(),
  max_iterations: PositiveInt.optional(),
  fallback_list: FallbackListSelector,
  sub_agents: SubAgentsSchema.optional(),
});

/** The LLM judge of finished sessions (the Go TARSy's `scoring`), on a chain or in defaults. */
const ScoringSchema = z.strictObject({
  enabled: z.boolean().optional(),
  agent: Name.optional(),
  llm_backend: Backend.optional(),
  llm_provider: Name.optional(),
  mcp_servers: NameList.optional(),
  max_iterations: PositiveInt.optional(),
  fallback_list: FallbackListSelector,
});

/**
 * The compose stage's model (the amended report after an action stage, ADR-0025), on a chain
 * over `defaults`: provider, backend and a named fallback list (`fallback_lists`).
 */
const ComposeKeys = {
  compose_provider: Name.optional(),
  compose_backend: Backend.optional(),
  compose_fallback_list: Name.optional(),
};

export const ChainSchema = z
  .strictObject({
    alert_types: z.array(Name).min(1, "must list at least one alert type"),
    description: z.string().optional(),
    llm_provider: Name.optional(),
    llm_backend: Backend.optional(),
    iteration_strategy: Strategy.optional(),
    executive_summary_provider: Name.optional(),
    executive_summary_backend: Backend.optional(),
    executive_summary_fallback_list: FallbackListSelector,
    executive_summary: JobPairingSchema.optional(),
    ...ComposeKeys,
    max_iterations: PositiveInt.optional(),
    mcp_servers: NameList.optional(),
    stages: z.array(StageSchema).min(1, "must have at least one stage"),
    sub_agents: SubAgentsSchema.optional(),
    chat: ChatSchema.optional(),
    scoring: ScoringSchema.optional(),
    fallback_list: FallbackListSelector,
    fallback_providers: FallbackProvidersSchema.optional(),
    /** The `label_maps` entry this chain's sessions are labelled with (over `defaults.label_map`). */
    label_map: LabelMapSelectorSchema.optional(),
  })
  .superRefine(chainLevelRefinements);
export type RawChain = z.output<typeof ChainSchema>;

export const LlmProviderSchema = z.strictObject({
  type: z.enum(LLM_PROVIDER_TYPES),
  model: Name,
  api_key_env: Name.optional(),
  base_url: z
    .string()
    .refine((url) => url === "" || URL.canParse(url), { error: "is not a valid URL" })
    .optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tool_result_tokens: PositiveInt.optional(),
  native_tools: NativeToolsSchema.optional(),
  reasoning_effort: z
    .enum(REASONING_EFFORTS, { error: `must be one of ${REASONING_EFFORTS.join(", ")}` })
    .optional(),
  credentials_env: Name.optional(),
  project_env: Name.optional(),
  location_env: Name.optional(),
  /** How long a call may wait for its first chunk, and for the next one, before it is retried. */
  initial_response_timeout: PositiveDurationSchema.optional(),
  stall_timeout: PositiveDurationSchema.optional(),
});
export type RawLlmProvider = z.output<typeof LlmProviderSchema>;

/** Embedding providers of investigation memory (`scripted` is the offline, deterministic one). */
export const EMBEDDING_PROVIDER_TYPES = ["google", "openai", "scripted"] as const;

/** Investigation memory (the Go TARSy's `defaults.memory`, ADR-0014). */
const MemorySchema = z.strictObject({
  enabled: z.boolean().default(false),
  max_inject: z.number().int().min(1).max(50).optional(),
  reflector_memory_limit: z.number().int().min(1).max(200).optional(),
  embedding: z
    .strictObject({
      provider: z.enum(EMBEDDING_PROVIDER_TYPES).optional(),
      model: Name.optional(),
      api_key_env: Name.optional(),
      dimensions: z.number().int().min(1).max(4096).optional(),
      base_url: z
        .string()
        .refine((url) => url === "" || URL.canParse(url), { error: "is not a valid URL" })
        .optional(),
    })
    .optional(),
});
export type RawMemory = z.output<typeof MemorySchema>;

export const DefaultsSchema = z
  .strictObject({
    llm_provider: Name.optional(),
    llm_backend: Backend.optional(),
    iteration_strategy: Strategy.optional(),
    max_iterations: PositiveInt.optional(),
    success_policy: z.enum(SUCCESS_POLICIES).optional(),
    alert_type: Name.optional(),
    runbook: z.string().optional(),
    alert_masking: z
      .strictObject({
        enabled: z.boolean().default(true),
        pattern_group: Name.refine(isKnownPatternGroup, {
          error: (issue) => `unknown masking pattern group "${String(issue.input)}"`,
        }).default("security"),
      })
      .optional(),
    iteration_timeout: DurationSchema.optional(),
    fallback_list: FallbackListSelector,
    fallback_providers: FallbackProvidersSchema.optional(),
    ...ComposeKeys,
    executive_summary_provider: Name.optional(),
    executive_summary_backend: Backend.optional(),
    executive_summary_fallback_list: FallbackListSelector,
    executive_summary: JobPairingSchema.optional(),
    /** Named agents' global model and fallback list (pair + list only; identity stays in agents). */
    agents: z.record(Name, AgentPairingSchema).optional(),
    summarization: DefaultSummarizationSchema.optional(),
    scoring: ScoringSchema.optional(),
    memory: MemorySchema.optional(),
    orchestrator: OrchestratorSchema.optional(),
    approval: ApprovalDefaultsSchema.optional(),
    /** The `label_maps` entry sessions are labelled with (unset: `builtin`). */
    label_map: LabelMapSelectorSchema.optional(),
  })
  .superRefine(chainLevelRefinements);
export type RawDefaults = z.output<typeof DefaultsSchema>;

export const QueueSchema = z.strictObject({
  worker_count: PositiveInt.optional(),
  max_concurrent_sessions: PositiveInt.optional(),
  max_pending_per_alert_type: z.number().int().nonnegative().optional(),
  poll_interval: DurationSchema.optional(),
  poll_interval_jitter: DurationSchema.optional(),
  session_timeout: DurationSchema.optional(),
  chat_timeout: DurationSchema.optional(),
  wrap_up_reserve: PositiveDurationSchema.optional(),
  resume_interrupted: z.boolean().optional(),
  graceful_shutdown_timeout: DurationSchema.optional(),
  orphan_detection_interval: DurationSchema.optional(),
  orphan_threshold: DurationSchema.optional(),
  heartbeat_interval: DurationSchema.optional(),
});
export type RawQueue = z.output<typeof QueueSchema>;

const HttpUrl = z
  .string()
  .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), {
    error: "is not a valid http(s) URL",
  });

/** A host name as an allowlist entry: no scheme, port or path. */
const DomainName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$|^\[?[0-9a-f:.]+\]?$/, {
    error: (issue) => `"${String(issue.input)}" is not a host name (no scheme, port or path)`,
  });

/** `https://github.com/{owner}/{repo}/tree/{ref}/{path}`; empty means no runbook listing. */
const RepoUrl = z.string().refine(
  (url) => {
    if (url === "") return true;
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) return false;
    const [owner, repo, kind, ref] = new URL(url).pathname.split("/").filter(Boolean);
    return Boolean(owner && repo) && (kind === undefined || (kind === "tree" && Boolean(ref)));
  },
  { error: "expected a GitHub tree URL such as https://github.com/org/repo/tree/main/runbooks" },
);

const GithubSchema = z.strictObject({
  /** Name of the environment variable holding the GitHub token. */
  token_env: Name.optional(),
  /** GitHub REST API base (GitHub Enterprise: https://HOST/api/v3). */
  api_url: HttpUrl.optional(),
});

const RunbooksSchema = z.strictObject({
  repo_url: RepoUrl.optional(),
  cache_ttl: DurationSchema.refine((ms) => ms > 0, { error: "must be greater than 0" }).optional(),
  allowed_domains: z.array(DomainName).optional(),
  /** Fetch from private, loopback and shared address ranges (internal Git servers). */
  allow_private_addresses: z.boolean().optional(),
});

/** `MM-DD`: a holiday every year (UTC), as the Go TARSy's `system.holidays` lists them. */
const HolidaySchema = z.strictObject({
  date: z.string().regex(/^(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, {
    error: (issue) => `"${String(issue.input)}" is not a MM-DD date`,
  }),
  name: Name,
});

/** The Go TARSy's `system.slack`, plus where an Alertmanager alert's thread fingerprint is. */
const SlackSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** Environment variable holding the bot token (default SLACK_BOT_TOKEN). */
  token_env: Name.optional(),
  /** Channel id (e.g. C12345678). */
  channel: z.string().optional(),
  /** Slack Web API base (default https://slack.com/api/). */
  api_url: HttpUrl.optional(),
  /** Alertmanager alerts: the label, then the annotation, that holds `slack_message_fingerprint`. */
  fingerprint_label: Name.optional(),
  fingerprint_annotation: Name.optional(),
});

const WebhookSchema = z.strictObject({
  url: HttpUrl,
  /** Which outcomes to send (default: the four terminal ones). */
  events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1).optional(),
  /** Environment variable holding the HMAC-SHA256 signing secret. */
  secret_env: Name.optional(),
});

const NotificationsSchema = z.strictObject({
  webhooks: z.array(WebhookSchema).optional(),
});

/** The Go TARSy's `system.retention`, plus the grace before soft-deleted rows are erased. */
export const RetentionSchema = z.strictObject({
  session_retention_days: z.number().int().min(1).optional(),
  /** Maximum age of the JetStream event stream (the live feeds' replay window). */
  event_ttl: PositiveDurationSchema.optional(),
  cleanup_interval: PositiveDurationSchema.optional(),
  /** How long a soft-deleted session is kept before it and every dependent row are erased. */
  hard_delete_after: PositiveDurationSchema.optional(),
});

const RateSchema = z.strictObject({
  input_per_million: z.number().nonnegative(),
  output_per_million: z.number().nonnegative(),
});

/** `start`/`end` as RFC 3339 or YYYY-MM-DD (that day's 00:00 UTC); the window is [start, end). */
const PromotionSchema = z.strictObject({
  id: Name.optional(),
  model: Name,
  start: z.string().optional(),
  end: z.string({ error: "end is required" }),
  input_per_million: z.number().nonnegative(),
  output_per_million: z.number().nonnegative(),
});

const CostEstimationSchema = z.strictObject({
  enabled: z.boolean().optional(),
  model_rates: z.record(z.string(), RateSchema).optional(),
  promotions: z.array(PromotionSchema).optional(),
});

const PromptCachingSchema = z.strictObject({ enabled: z.boolean().optional() });

export const SystemSchema = z.strictObject({
  holidays: z.array(HolidaySchema).optional(),
  allowed_ws_origins: z.array(Name).optional(),
  dashboard_url: z.string().optional(),
  github: GithubSchema.optional(),
  runbooks: RunbooksSchema.optional(),
  slack: SlackSchema.optional(),
  notifications: NotificationsSchema.optional(),
  retention: RetentionSchema.optional(),
  cost_estimation: CostEstimationSchema.optional(),
  prompt_caching: PromptCachingSchema.optional(),
});
export type RawSystem = z.output<typeof SystemSchema>;

const Section = z.record(z.string(), z.unknown()).nullish();

/** Top level of tarsy.yaml; each entry of the named sections is parsed on its own. */
export const TarsyFileSchema = z.strictObject({
  queue: z.unknown().optional(),
  system: z.unknown().optional(),
  /** The Go TARSy's top-level `retention:`, an alias of `system.retention` (which wins). */
  retention: z.unknown().optional(),
  authorization: z.unknown().optional(),
  defaults: z.unknown().optional(),
  mcp_servers: Section,
  agents: Section,
  agent_chains: Section,
  /** Session label maps by name; validated on their own (see `labels.ts`). */
  label_maps: z.unknown().optional(),
  /** Named fallback walks (`FallbackListsSchema`), parsed on their own. */
  fallback_lists: z.unknown().optional(),
});

export const ProvidersFileSchema = z.strictObject({
  llm_providers: Section,
});
