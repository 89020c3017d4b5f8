import { z } from "zod";
import { IdSchema, JsonObjectSchema, TimestampSchema } from "./common.ts";
import { SessionStatusSchema } from "./enums.ts";
import { ToolClassSourceSchema } from "./mcp.ts";
import { FetchableUrlSchema } from "./url.ts";
/**
 * The HTTP API of ingest-api (`/api/v1/*`, `/health`): request bodies, query strings and
 * response bodies. Field names are snake_case like the rest of the wire.
 */

// --- alert submission ---

/**
 * Per-alert MCP override (`mcp` / `mcp_selection`): the complete server set for this alert
 * (replaces, never merges). Stored with the session; `@tarsy/config` resolves it per execution.
 */
export const McpSelectionSchema = z.object({
  servers: z
    .array(
      z.object({
        name: z.string().min(1),
        /** Empty or absent: every tool of the server. */
        tools: z.array(z.string().min(1)).optional(),
      }),
    )
    .min(1),
  native_tools: z
    .object({
      google_search: z.boolean().optional(),
      code_execution: z.boolean().optional(),
      url_context: z.boolean().optional(),
    })
    .optional(),
});
export type McpSelection = z.infer<typeof McpSelectionSchema>;

export const AlertSubmitRequestSchema = z
  .object({
    alert_type: z.string().trim().min(1).max(200).optional(),
    /**
     * The alert payload: a JSON object (stored as its JSON text) or non-empty text. At most
     * 1 MB. Arrays, numbers, booleans and null are rejected.
     */
    data: z.union([z.string().min(1), JsonObjectSchema], {
      error: "data must be a JSON object or a non-empty string",
    }),
    /** Runbook URL for this alert: http(s), no credentials, not link-local or metadata. */
    runbook: FetchableUrlSchema.optional(),
    mcp: McpSelectionSchema.optional(),
    /** Alias of `mcp` (TARSy's field name). */
    mcp_selection: McpSelectionSchema.optional(),
    /** The project the session belongs to (default: `authorization.default_project`). */
    project: z.string().trim().min(1).max(63).optional(),
    /**
     * Threads the Slack notifications: the recent channel message containing this text (case
     * and whitespace aside) is the thread they go to (the Go TARSy's field).
     */
    slack_message_fingerprint: z.string().trim().min(1).max(1000).optional(),
  })
  .refine((body) => !(body.mcp && body.mcp_selection), {
    message: "give either mcp or mcp_selection, not both",
    path: ["mcp_selection"],
  });
export type AlertSubmitRequest = z.infer<typeof AlertSubmitRequestSchema>;

export const AlertSubmitResponseSchema = z.object({
  session_id: IdSchema,
  status: z.literal("queued"),
});
export type AlertSubmitResponse = z.infer<typeof AlertSubmitResponseSchema>;

// --- Alertmanager webhook (version 4); extra fields are tolerated ---

const LabelSetSchema = z.record(z.string(), z.string());

export const AlertmanagerAlertSchema = z.looseObject({
  status: z.enum(["firing", "resolved"]),
  labels: LabelSetSchema,
  annotations: LabelSetSchema.default({}),
  startsAt: z.string().optional(),
  endsAt: z.string().optional(),
  generatorURL: z.string().optional(),
  fingerprint: z.string().min(1).max(128),
});
export type AlertmanagerAlert = z.infer<typeof AlertmanagerAlertSchema>;

export const AlertmanagerWebhookSchema = z.looseObject({
  version: z.string().optional(),
  groupKey: z.string().default(""),
  truncatedAlerts: z.number().int().nonnegative().default(0),
  status: z.enum(["firing", "resolved"]),
  receiver: z.string().default(""),
  groupLabels: LabelSetSchema.default({}),
  commonLabels: LabelSetSchema.default({}),
  commonAnnotations: LabelSetSchema.default({}),
  externalURL: z.string().default(""),
  alerts: z.array(AlertmanagerAlertSchema).max(10_000),
});
export type AlertmanagerWebhook = z.infer<typeof AlertmanagerWebhookSchema>;

export const AlertmanagerSkipReasonSchema = z.enum([
  /** The same fingerprint is pending, running or was investigated within the dedupe window. */
  "duplicate",
  /** A resolved alert starts nothing; it is recorded on its session when one exists. */
  "resolved",
  /** Per-group mode: the group already has a session within the window. */
  "group_duplicate",
  /**
   * Its alert type already has `queue.max_pending_per_alert_type` sessions waiting; nothing
   * was stored for it and the notification is answered 503 so Alertmanager retries it.
   */
  "pending_limit",
  /**
   * Its project label names a project that is not configured. The receiver refuses such a
   * notification whole (400 `unknown_project`) before intake, so a response does not carry it.
   */
  "unknown_project",
  /**
   * The receiver may not create sessions in the project its label names. Refused whole (403)
   * before intake while authorization is on, so a response does not carry it.
   */
  "forbidden_project",
]);
export type AlertmanagerSkipReason = z.infer<typeof AlertmanagerSkipReasonSchema>;

export const AlertmanagerIntakeResponseSchema = z.object({
  mode: z.enum(["per_alert", "per_group"]),
  group_key: z.string(),
  sessions_created: z.array(
    z.object({
      session_id: IdSchema,
      alert_type: z.string(),
      /** Fingerprints the session investigates (one, or the whole group). */
      fingerprints: z.array(z.string()),
      project: z.string().optional(),
    }),
  ),
  alerts_skipped: z.array(
    z.object({
      fingerprint: z.string(),
      status: z.enum(["firing", "resolved"]),
      reason: AlertmanagerSkipReasonSchema,
      /** The session that already covers the alert, when there is one. */
      session_id: IdSchema.nullable(),
      /** The project the alert's label named, for the project reasons. */
      project: z.string().optional(),
    }),
  ),
  /** Alerts Alertmanager left out of this notification (its max_alerts). */
  truncated_alerts: z.number().int().nonnegative(),
});
export type AlertmanagerIntakeResponse = z.infer<typeof AlertmanagerIntakeResponseSchema>;

// --- system ---

export const DependencyHealthSchema = z.object({
  status: z.enum(["healthy", "unhealthy", "not_ready", "not_configured"]),
  error: z.string().optional(),
  latency_ms: z.number().nonnegative().optional(),
  details: z.unknown().optional(),
});
export type DependencyHealth = z.infer<typeof DependencyHealthSchema>;

export const HealthResponseSchema = z.object({
  status: z.enum(["healthy", "degraded"]),
  version: z.string(),
  checks: z.object({
    /** The Go TARSy's name for the same check as `postgres`. */
    database: DependencyHealthSchema,
    postgres: DependencyHealthSchema,
    nats: DependencyHealthSchema,
    mcp_gateway: DependencyHealthSchema,
    llm_service: DependencyHealthSchema,
  }),
  /** How much configuration this process serves (built-ins included), as the Go TARSy reports it. */
  configuration: z.object({
    agents: z.number().int().nonnegative(),
    chains: z.number().int().nonnegative(),
    mcp_servers: z.number().int().nonnegative(),
    llm_providers: z.number().int().nonnegative(),
  }),
  warnings: z.array(
    z.object({
      id: z.string(),
      category: z.string(),
      server_id: z.string().optional(),
      message: z.string(),
      details: z.string().optional(),
      created_at: TimestampSchema,
    }),
  ),
});
export type HealthResponse = z.infer<typeof HealthResponseSchema>;

/** Gemini's native tools, as `native_tools` in `llm-providers.yaml` names them. */
export const NATIVE_TOOL_NAMES = ["google_search", "code_execution", "url_context"] as const;
export const NativeToolsMapSchema = z.object({
  google_search: z.boolean(),
  code_execution: z.boolean(),
  url_context: z.boolean(),
});

/** `GET /api/v1/system/default-tools`. */
export const DefaultToolsResponseSchema = z.object({
  /**
   * The Go TARSy's field: each native tool and whether it is on by default, from the
   * default provider's `native_tools` (or, with no default provider, the first Google one);
   * a tool the config does not name is off.
   */
  native_tools: NativeToolsMapSchema,
  /** The provider `native_tools` was read from; null when none offers native tools. */
  source_provider: z.string().nullable(),
  /** Every configured provider: the native tools it offers (none but for Google) and their state. */
  providers: z.array(
    z.object({
      name: z.string(),
      type: z.string(),
      native_tools: z.record(z.string(), z.boolean()),
    }),
  ),
});
export type DefaultToolsResponse = z.infer<typeof DefaultToolsResponseSchema>;

/** `GET /api/v1/runbooks`: blob URLs of the `.md` files under `system.runbooks.repo_url`. */
export const RunbooksResponseSchema = z.array(z.string());
export type RunbooksResponse = z.infer<typeof RunbooksResponseSchema>;

export const SystemWarningsResponseSchema = z.object({
  warnings: HealthResponseSchema.shape.warnings,
});

export const McpServersResponseSchema = z.object({
  servers: z.array(
    z.object({
      id: z.string(),
      transport: z.enum(["stdio", "http", "sse"]),
      /** `enabled: false` in config: not started, not checked, not offered to agents. */
      enabled: z.boolean(),
      healthy: z.boolean().nullable(),
      /** Each tool with its class: a mutating tool is offered to action agents only. */
      tools: z.array(
        z.object({
          name: z.string(),
          description: z.string(),
          mutating: z.boolean(),
          mutating_source: ToolClassSourceSchema,
        }),
      ),
    }),
  ),
  /** Set when the gateway could not be asked: servers come from config, without tools. */
  gateway_error: z.string().optional(),
});
export type McpServersResponse = z.infer<typeof McpServersResponseSchema>;

export const AlertTypesResponseSchema = z.object({
  alert_types: z.array(z.string()),
  default_alert_type: z.string(),
  chains: z.array(
    z.object({
      id: z.string(),
      alert_types: z.array(z.string()),
      description: z.string().nullable(),
      stages: z.array(z.string()),
      chat_enabled: z.boolean(),
    }),
  ),
});
export type AlertTypesResponse = z.infer<typeof AlertTypesResponseSchema>;

export const FilterOptionsResponseSchema = z.object({
  statuses: z.array(SessionStatusSchema),
  alert_types: z.array(z.string()),
  chain_ids: z.array(z.string()),
  /** The projects the caller may see (every project while authorization is off). */
  projects: z.array(z.string()),
  /** Distinct label names stored on the visible sessions. */
  labels: z.array(z.string()),
});
export type FilterOptionsResponse = z.infer<typeof FilterOptionsResponseSchema>;

/**
 * `GET /api/v1/system/config`: the configuration as resolved, for the dashboard's viewer.
 * Only what is safe to show: names, types, models and which environment variable holds a
 * credential, never a value (no keys, tokens, headers, commands' env or URL credentials).
 */
/** Guardrails of an agent that dispatches sub-agents (null: not capped). */
const OrchestratorLimitsViewSchema = z.object({
  max_concurrent_agents: z.number().int(),
  agent_timeout_ms: z.number().int().nullable(),
  max_budget_ms: z.number().int().nullable(),
});

/** A side job's model knobs (`*_provider`, `*_backend`, `*_fallback_list`), as written. */
const ModelKnobsViewSchema = z.object({
  llm_provider: z.string().nullable(),
  llm_backend: z.string().nullable(),
  fallback_list: z.string().nullable(),
});

/** The model a chain's side job runs on, and its fallback walk in order, resolved. */
const ResolvedModelViewSchema = z.object({
  llm_provider: z.string(),
  llm_backend: z.string(),
  fallbacks: z.array(z.object({ llm_provider: z.string(), llm_backend: z.string() })),
});

export const SystemConfigResponseSchema = z.object({
  defaults: z.object({
    llm_provider: z.string(),
    alert_type: z.string(),
    max_iterations: z.number().int(),
    /** `defaults.orchestrator` over the built-in guardrails. */
    orchestrator: OrchestratorLimitsViewSchema,
    /** `defaults.label_map` as written (null: unset, the built-in map). */
    label_map: z.string().nullable(),
    /** `defaults.agents`: named agents' global model and fallback list, as written. */
    agents: z.array(
      z.object({
        name: z.string(),
        llm_provider: z.string().nullable(),
        llm_backend: z.string().nullable(),
        fallback_list: z.string().nullable(),
      }),
    ),
    /** `defaults.summarization`: the model of tool-result summaries and its list (null: unset). */
    summarization: z
      .object({
        llm_provider: z.string().nullable(),
        llm_backend: z.string().nullable(),
        fallback_list: z.string().nullable(),
      })
      .nullable(),
    /** `defaults.compose_*`: the compose stage's model (ADR-0025), as written. */
    compose: ModelKnobsViewSchema,
    /** `defaults.executive_summary_*`: the executive summary's model, as written. */
    executive_summary: ModelKnobsViewSchema,
    /** Investigation memory (`defaults.memory`): the embedding's key by its variable's name. */
    memory: z.object({
      enabled: z.boolean(),
      max_inject: z.number().int(),
      reflector_memory_limit: z.number().int(),
      embedding: z.object({
        provider: z.string(),
        model: z.string(),
        api_key_env: z.string(),
        dimensions: z.number().int(),
        base_url: z.string().nullable(),
      }),
    }),
  }),
  chains: z.array(
    z.object({
      id: z.string(),
      description: z.string().nullable(),
      alert_types: z.array(z.string()),
      /** The chain's provider, or the default one when it names none. */
      llm_provider: z.string(),
      /** The compose stage's model on this chain, resolved (chain → defaults → chain → default). */
      compose: ResolvedModelViewSchema,
      /** The executive summary's model on this chain, resolved. */
      executive_summary: ResolvedModelViewSchema,
      chat_enabled: z.boolean(),
      /** Completed sessions are scored automatically (chain → defaults.scoring). */
      scoring_enabled: z.boolean(),
      /** `label_map` as the chain writes it (null: it inherits `defaults.label_map`). */
      label_map: z.string().nullable(),
      builtin: z.boolean(),
      /** The chain's `sub_agents`, as listed. */
      sub_agents: z.array(z.string()),
      /** The chat agent's sub-agent catalog (empty: chat dispatches nothing, or is disabled). */
      chat_sub_agents: z.array(z.string()),
      stages: z.array(
        z.object({
          name: z.string(),
          agents: z.array(z.string()),
          replicas: z.number().int(),
          success_policy: z.string().nullable(),
          /** Each orchestrating agent of the stage → its sub-agent catalog. */
          sub_agents: z.record(z.string(), z.array(z.string())),
        }),
      ),
    }),
  ),
  agents: z.array(
    z.object({
      name: z.string(),
      description: z.string().nullable(),
      mcp_servers: z.array(z.string()),
      llm_backend: z.string().nullable(),
      max_iterations: z.number().int().nullable(),
      /** The definition's `sub_agents`, as listed. */
      sub_agents: z.array(z.string()),
      /** Its guardrails when it dispatches sub-agents (defaults, then its `orchestrator:`). */
      orchestrator: OrchestratorLimitsViewSchema,
      builtin: z.boolean(),
    }),
  ),
  /** The `label_maps` catalog, `builtin` included (injected or replaced by YAML), by name. */
  label_maps: z.array(
    z.object({
      name: z.string(),
      multi: z.boolean(),
      instructions: z.string().nullable(),
      labels: z.array(z.object({ label: z.string(), description: z.string() })),
      /** The built-in map as shipped (false when YAML replaced it or for any other name). */
      builtin: z.boolean(),
    }),
  ),
  /** The `fallback_lists` catalog, by name, entries in order (an omitted backend as langchain). */
  fallback_lists: z.array(
    z.object({
      name: z.string(),
      entries: z.array(z.object({ llm_provider: z.string(), llm_backend: z.string() })),
    }),
  ),
  /**
   * Every place that chooses a fallback walk, as written (never expanded): a `fallback_list` /
   * `*_fallback_list` name, or the deprecated inline `fallback_providers`.
   */
  fallback_selectors: z.array(
    z.object({
      path: z.string(),
      fallback_list: z.string().nullable(),
      fallback_providers: z
        .array(z.object({ provider: z.string(), backend: z.string() }))
        .nullable(),
    }),
  ),
  /** The skills of `<configDir>/skills/` (their bodies are not shown). */
  skills: z.array(z.object({ name: z.string(), description: z.string() })),
  llm_providers: z.array(
    z.object({
      name: z.string(),
      type: z.string(),
      model: z.string(),
      /** Scheme, host and path only. */
      base_url: z.string().nullable(),
      /** Names of the environment variables holding credentials, never their values. */
      api_key_env: z.string().nullable(),
      credentials_env: z.string().nullable(),
      project_env: z.string().nullable(),
      location_env: z.string().nullable(),
      /** Gemini native tools as configured (null: none configured). */
      native_tools: z.record(z.string(), z.boolean()).nullable(),
      /** The effort sent (configured, or the default of recent models); null: the provider's. */
      reasoning_effort: z.string().nullable(),
      builtin: z.boolean(),
    }),
  ),
  /**
   * MCP servers with their transport redacted, fail-closed: `***` for an argument or header
   * value that is a credential (named like one: `--token X`, `--api-key=X`, `Authorization`,
   * `X-Api-Key`, `*token*`, `*secret*`; or looking like one: `sk-…`, a JWT, a long token),
   * URLs without credentials, query or fragment, environment variables by name only, and
   * whether a bearer token is set, never the token.
   */
  mcp_servers: z.array(
    z.object({
      id: z.string(),
      enabled: z.boolean(),
      transport: z.object({
        type: z.enum(["stdio", "http", "sse"]),
        command: z.string().nullable(),
        args: z.array(z.string()),
        /** Names of the variables set for the process, never their values. */
        env_keys: z.array(z.string()),
        url: z.string().nullable(),
        bearer_token_set: z.boolean(),
        verify_ssl: z.boolean().nullable(),
        timeout_ms: z.number().int().nullable(),
        /** Header names and values, a credential's value as `***`. */
        custom_headers: z.record(z.string(), z.string()),
        custom_header_keys: z.array(z.string()),
        session_cleanup_url: z.string().nullable(),
      }),
      auth_mode: z.string(),
      data_masking_enabled: z.boolean(),
      summarization_enabled: z.boolean(),
      /** `tools`: tool name or glob → mutating, over the server's annotations, as written. */
      tool_classes: z.array(z.object({ pattern: z.string(), mutating: z.boolean() })),
    }),
  ),
  /** Where notifications go: never a token, a secret, or a webhook URL's path or query. */
  notifications: z.object({
    slack: z.object({ enabled: z.boolean(), channel: z.string(), token_env: z.string() }),
    webhooks: z.array(
      z.object({
        /** Scheme and host only (paths and queries often hold the hook's token). */
        origin: z.string().nullable(),
        events: z.array(z.string()),
        /** Whether requests are signed (`secret_env` set). */
        signed: z.boolean(),
      }),
    ),
  }),
  retention: z.object({
    session_retention_days: z.number().int(),
    event_ttl_ms: z.number().int(),
    cleanup_interval_ms: z.number().int(),
    hard_delete_after_ms: z.number().int(),
  }),
  cost_estimation: z.object({
    enabled: z.boolean(),
    model_rates: z.record(
      z.string(),
      z.object({ input_per_million: z.number(), output_per_million: z.number() }),
    ),
    promotions: z.array(
      z.object({
        id: z.string(),
        model: z.string(),
        start: z.string().nullable(),
        end: z.string(),
        input_per_million: z.number(),
        output_per_million: z.number(),
      }),
    ),
  }),
  /** `system.prompt_caching` (ADR-0026): Anthropic/OpenAI breakpoints on loop calls. */
  prompt_caching: z.object({ enabled: z.boolean() }),
});
export type SystemConfigResponse = z.infer<typeof SystemConfigResponseSchema>;
