import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import {
  AuthorizationSchema,
  authorizationProblems,
  builtinAuthorization,
  toAuthorization,
} from "./authorization.ts";
import {
  BUILTIN_FILE,
  builtinAgents,
  builtinChains,
  builtinDefaults,
  builtinLlmProviders,
  builtinMcpServers,
  builtinQueue,
  builtinSystem,
} from "./builtins.ts";
import { ConfigError, type ConfigIssue } from "./errors.ts";
import { type FieldKind, interpolateDocument } from "./interpolate.ts";
import {
  toAgent,
  toChain,
  toDefaults,
  toLlmProvider,
  toMcpServer,
  toQueue,
  toSystem,
} from "./normalize.ts";
import { type IgnoredKey, parseEntry } from "./parse.ts";
import { fallbackCredentialIssues, vertexEnvIssues } from "./provider-env.ts";
import {
  AgentSchema,
  ChainSchema,
  DefaultsSchema,
  LlmProviderSchema,
  McpServerSchema,
  ProvidersFileSchema,
  QueueSchema,
  SystemSchema,
  TarsyFileSchema,
} from "./schema.ts";
import type {
  AgentConfig,
  ChainConfig,
  ConfigWarning,
  LlmProviderConfig,
  McpServerConfig,
  TarsyConfig,
} from "./types.ts";
import { nativeToolFallbackWarnings, validateReferences } from "./validate.ts";

export const TARSY_FILE = "tarsy.yaml";
export const PROVIDERS_FILE = "llm-providers.yaml";
export const DEFAULT_CONFIG_DIR = "deploy/config";

export interface LoadConfigOptions {
  /** Directory holding tarsy.yaml and llm-providers.yaml (both optional). */
  configDir: string;
  /** Variables for `{{.VAR}}` / `${VAR}`; the package never reads process.env itself. */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * The environment providers are called with (llm-service's), when this process has it:
   * every fallback provider's API key variable must then be set. Services that never hold
   * provider keys leave it out.
   */
  credentialEnv?: Readonly<Record<string, string | undefined>>;
}

export interface LoadConfigResult {
  config: TarsyConfig;
  warnings: ConfigWarning[];
}

/** Same rule as the mcp-gateway contract: tool names are `server.tool`, so no dots. */
const MCP_SERVER_ID_RE = /^\w[\w-]{0,127}$/;

/** TARSy features that load without error but do nothing here yet. */
const NOT_IMPLEMENTED = new Set([
  "scoring",
  "memory",
  "sub_agents",
  "slack",
  "retention",
  "skills",
  "type",
  "server_id",
  "enabled",
  "sse_read_timeout",
  "disable_ssl_verification",
  "reasoning_effort",
]);

/** Fields whose variable may be unset: the value becomes empty and a warning is given. */
const OPTIONAL_FIELDS = new Set(["bearer_token", "base_url", "dashboard_url", "repo_url"]);
const OPTIONAL_MAPS = new Set(["env", "custom_headers", "headers"]);
/** Free text: an unset `${VAR}` stays as written (prose and shell snippets use that syntax). */
const TEXT_FIELDS = new Set(["description", "instructions", "custom_instructions", "runbook"]);

function fieldKindOf(path: readonly (string | number)[]): FieldKind {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (typeof last === "string" && TEXT_FIELDS.has(last)) return "text";
  if (typeof last === "string" && OPTIONAL_FIELDS.has(last)) return "optional";
  if (typeof parent === "string" && OPTIONAL_MAPS.has(parent)) return "optional";
  return "required";
}

interface LoadState {
  env: LoadConfigOptions["env"];
  issues: ConfigIssue[];
  warnings: ConfigWarning[];
  ignored: IgnoredKey[];
  /** `file\0path` of values whose variable is missing: other problems there are consequences. */
  missingAt: Set<string>;
}

/** Reads, interpolates and parses one YAML file; undefined when the file does not exist. */
function readYaml(file: string, state: LoadState): unknown {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, "utf8");
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter });
  if (doc.errors.length > 0) {
    for (const error of doc.errors) {
      const where = lineCounter.linePos(error.pos[0]);
      state.issues.push({
        file,
        path: `line ${where.line}, column ${where.col}`,
        message: `YAML syntax error: ${error.message.split("\n")[0]}`,
      });
    }
    return undefined;
  }
  for (const missing of interpolateDocument(doc, text, state.env, fieldKindOf)) {
    const message = `environment variable "${missing.variable}" is not set`;
    if (missing.kind !== "required") {
      const outcome = missing.kept ? "left as written" : "using an empty value";
      state.warnings.push({ file, path: missing.path, message: `${message}; ${outcome}` });
    } else {
      state.issues.push({ file, path: missing.path, message });
      state.missingAt.add(`${file}\u0000${missing.path}`);
    }
  }
  return doc.toJS() ?? {};
}

/** Parses each entry of a named section; failed names are remembered so references stay quiet. */
function parseSection<S extends z.ZodType, T>(
  state: LoadState,
  file: string,
  section: string,
  entries: Record<string, unknown> | null | undefined,
  schema: S,
  build: (name: string, raw: z.output<S>) => T,
  invalid: Set<string>,
): Map<string, T> {
  const out = new Map<string, T>();
  for (const [name, value] of Object.entries(entries ?? {})) {
    const parsed = parseEntry(schema, value ?? {}, file, [section, name]);
    state.issues.push(...parsed.issues);
    state.ignored.push(...parsed.ignored);
    if (parsed.data === undefined) invalid.add(name);
    else out.set(name, build(name, parsed.data));
  }
  return out;
}

/**
 * Loads the configuration: built-ins, then tarsy.yaml and llm-providers.yaml from `configDir`
 * (each optional), with environment interpolation, overrides by name and full validation.
 * Throws a `ConfigError` listing every problem (file, path, message).
 */
export function loadConfig(options: LoadConfigOptions): LoadConfigResult {
  const state: LoadState = {
    env: options.env,
    issues: [],
    warnings: [],
    ignored: [],
    missingAt: new Set(),
  };
  const tarsyFile = join(options.configDir, TARSY_FILE);
  const providersFile = join(options.configDir, PROVIDERS_FILE);
  if (!existsSync(options.configDir) || !statSync(options.configDir).isDirectory()) {
    state.warnings.push({
      file: options.configDir,
      path: "",
      message: "config directory does not exist; using the built-in configuration only",
    });
  }

  const tarsyRaw = readYaml(tarsyFile, state);
  const tarsy = parseEntry(TarsyFileSchema, tarsyRaw ?? {}, tarsyFile, []);
  state.issues.push(...tarsy.issues);
  state.ignored.push(...tarsy.ignored);
  const top = tarsy.data ?? {};

  const providersRaw = readYaml(providersFile, state);
  const providersTop = parseEntry(ProvidersFileSchema, providersRaw ?? {}, providersFile, []);
  state.issues.push(...providersTop.issues);
  state.ignored.push(...providersTop.ignored);

  const section = <S extends z.ZodType>(schema: S, value: unknown, name: string) => {
    if (value === undefined || value === null) return undefined;
    const parsed = parseEntry(schema, value, tarsyFile, [name]);
    state.issues.push(...parsed.issues);
    state.ignored.push(...parsed.ignored);
    return parsed.data;
  };
  const defaults = toDefaults(builtinDefaults(), section(DefaultsSchema, top.defaults, "defaults"));
  const queue = toQueue(builtinQueue(), section(QueueSchema, top.queue, "queue"));
  const system = toSystem(builtinSystem(), section(SystemSchema, top.system, "system"));
  const authorization = toAuthorization(
    builtinAuthorization(),
    section(AuthorizationSchema, top.authorization, "authorization"),
  );
  if (top.authorization !== undefined && top.authorization !== null) {
    for (const [path, message] of authorizationProblems(authorization)) {
      state.issues.push({ file: tarsyFile, path: `authorization.${path}`, message });
    }
  }

  const invalid = {
    agents: new Set<string>(),
    chains: new Set<string>(),
    mcpServers: new Set<string>(),
    llmProviders: new Set<string>(),
  };
  const sources = {
    defaults: top.defaults ? tarsyFile : BUILTIN_FILE,
    agents: new Map<string, string>(),
    chains: new Map<string, string>(),
    mcpServers: new Map<string, string>(),
    llmProviders: new Map<string, string>(),
  };

  for (const id of Object.keys(top.mcp_servers ?? {})) {
    if (!MCP_SERVER_ID_RE.test(id)) {
      state.issues.push({
        file: tarsyFile,
        path: `mcp_servers.${id}`,
        message:
          "MCP server ids may only hold letters, digits, '_' and '-' (tools are addressed as server.tool)",
      });
    }
  }
  const mcpServers = merge(
    builtinMcpServers(options.env).map((s) => [s.id, s] as const),
    parseSection(
      state,
      tarsyFile,
      "mcp_servers",
      top.mcp_servers,
      McpServerSchema,
      toMcpServer,
      invalid.mcpServers,
    ),
    sources.mcpServers,
    tarsyFile,
  );
  const agents = merge(
    builtinAgents().map((a) => [a.name, a] as const),
    parseSection(state, tarsyFile, "agents", top.agents, AgentSchema, toAgent, invalid.agents),
    sources.agents,
    tarsyFile,
  );
  const chains = merge(
    builtinChains().map((c) => [c.id, c] as const),
    parseSection(
      state,
      tarsyFile,
      "agent_chains",
      top.agent_chains,
      ChainSchema,
      toChain,
      invalid.chains,
    ),
    sources.chains,
    tarsyFile,
  );
  const llmProviders = merge(
    builtinLlmProviders().map((p) => [p.name, p] as const),
    parseSection(
      state,
      providersFile,
      "llm_providers",
      providersTop.data?.llm_providers,
      LlmProviderSchema,
      toLlmProvider,
      invalid.llmProviders,
    ),
    sources.llmProviders,
    providersFile,
  );

  const config: TarsyConfig = {
    configDir: options.configDir,
    defaults,
    queue,
    system,
    authorization,
    agents,
    chains,
    mcpServers,
    llmProviders,
    sources,
  };
  state.issues.push(...validateReferences(config, invalid));
  state.issues.push(...vertexEnvIssues(config, options.env));
  if (options.credentialEnv) {
    state.issues.push(...fallbackCredentialIssues(config, options.credentialEnv));
  }
  state.warnings.push(...ignoredWarnings(state.ignored));
  state.warnings.push(...apiKeyWarnings(config, options.env));
  state.warnings.push(...nativeToolFallbackWarnings(config));
  const issues = state.issues.filter(
    (issue) =>
      !state.missingAt.has(`${issue.file}\u0000${issue.path}`) ||
      issue.message.startsWith("environment variable"),
  );
  if (issues.length > 0) throw new ConfigError(issues);
  return { config, warnings: state.warnings };
}

type Entry = AgentConfig | ChainConfig | McpServerConfig | LlmProviderConfig;

/** Built-ins first, then the file's entries replace any of the same name (never merge fields). */
function merge<T extends Entry>(
  builtins: readonly (readonly [string, T])[],
  fromFile: Map<string, T>,
  sources: Map<string, string>,
  file: string,
): Map<string, T> {
  const out = new Map<string, T>();
  for (const [name, entry] of builtins) {
    out.set(name, entry);
    sources.set(name, BUILTIN_FILE);
  }
  for (const [name, entry] of fromFile) {
    out.set(name, entry);
    sources.set(name, file);
  }
  return out;
}

/** One warning per ignored key name and file, naming every place it appears. */
function ignoredWarnings(ignored: readonly IgnoredKey[]): ConfigWarning[] {
  const groups = new Map<string, IgnoredKey[]>();
  for (const item of ignored) {
    const key = `${item.file}\u0000${item.key}`;
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return [...groups.values()].map((items) => {
    const first = items[0] as IgnoredKey;
    const why = NOT_IMPLEMENTED.has(first.key)
      ? "is a TARSy setting this implementation does not support yet"
      : "is not a known setting";
    return {
      file: first.file,
      path: items.map((i) => i.path).join(", "),
      message: `"${first.key}" ${why}; ignored`,
    };
  });
}

/** The default provider without its key is worth a warning (the demo would fail at the first call). */
function apiKeyWarnings(config: TarsyConfig, env: LoadConfigOptions["env"]): ConfigWarning[] {
  const provider = config.llmProviders.get(config.defaults.llm_provider);
  if (!provider?.api_key_env || env[provider.api_key_env]) return [];
  return [
    {
      file: provider.builtin ? BUILTIN_FILE : join(config.configDir, PROVIDERS_FILE),
      path: `llm_providers.${provider.name}.api_key_env`,
      message: `the default LLM provider reads its key from ${provider.api_key_env}, which is not set`,
    },
  ];
}
