import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Document, isScalar, LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { agentTypeWarnings, composeTypeIssues } from "./agent-type.ts";
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
import { fallbackListIssues, fallbackProvidersDeprecations } from "./fallback-lists.ts";
import { interpolateDocument } from "./interpolate.ts";
import { type LineOf as LabelLineOf, labelSelectorIssues, loadLabelMaps } from "./labels.ts";
import {
  toAgent,
  toChain,
  toDefaults,
  toFallbackLists,
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
  FallbackListsSchema,
  LlmProviderSchema,
  McpServerSchema,
  ProvidersFileSchema,
  QueueSchema,
  RetentionSchema,
  SystemSchema,
  TarsyFileSchema,
} from "./schema.ts";
import { loadSkills } from "./skills.ts";
import { systemIssues } from "./system-issues.ts";
import type {
  AgentConfig,
  ChainConfig,
  ConfigWarning,
  LlmProviderConfig,
  McpServerConfig,
  TarsyConfig,
} from "./types.ts";
import { type UnsupportedKey, unsupportedKeyAt } from "./unsupported.ts";
import {
  disabledServerWarnings,
  type LineOf,
  nativeToolFallbackWarnings,
  subAgentWarnings,
  validateReferences,
  validateSkillReferences,
} from "./validate.ts";

export const TARSY_FILE = "tarsy.yaml";
export const PROVIDERS_FILE = "llm-providers.yaml";
export const DEFAULT_CONFIG_DIR = "deploy/config";

export interface LoadConfigOptions {
  /** Directory holding tarsy.yaml and llm-providers.yaml (both optional). */
  configDir: string;
  /** Variables for `{{.VAR}}` (`${VAR}` is left as written); the package never reads process.env itself. */
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

/**
 * `{{.SESSION_ID}}` is a run-time placeholder (the agent execution's id) in an MCP server's
 * `transport.custom_headers` values and `transport.session_cleanup_url`: kept at load.
 */
function keepsSessionId(path: readonly (string | number)[]): boolean {
  if (path[0] !== "mcp_servers" || path[2] !== "transport") return false;
  if (path.length === 4) return path[3] === "session_cleanup_url";
  return path.length === 5 && (path[3] === "custom_headers" || path[3] === "headers");
}

interface LoadState {
  env: LoadConfigOptions["env"];
  issues: ConfigIssue[];
  warnings: ConfigWarning[];
  ignored: IgnoredKey[];
  /** `file\0path` → variables missing there: a problem at that path names them. */
  missingAt: Map<string, string[]>;
}

/** Reads, interpolates and parses one YAML file; undefined when the file does not exist. */
function readYaml(
  file: string,
  state: LoadState,
  inspect?: (doc: Document, lines: LineCounter) => void,
): unknown {
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
  for (const missing of interpolateDocument(doc, text, state.env, keepsSessionId)) {
    state.warnings.push({
      file,
      path: missing.path,
      message: `environment variable "${missing.variable}" is not set; using an empty value`,
    });
    const key = `${file}\u0000${missing.path}`;
    state.missingAt.set(key, [...(state.missingAt.get(key) ?? []), missing.variable]);
  }
  inspect?.(doc, lineCounter);
  return doc.toJS() ?? {};
}

/**
 * The file line of a string's first line: for a block scalar (`policy: |`), the line after
 * its header; for one on its key's line, that line. Undefined when it is not a string there.
 */
function firstLineOf(doc: Document, lines: LineCounter, path: string[]): number | undefined {
  const node = doc.getIn(path, true);
  if (!isScalar(node) || !node.range) return undefined;
  const { line } = lines.linePos(node.range[0]);
  const block = node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED";
  return block ? line + 1 : line;
}

/** The file line of the node at `path` (a key's value, a list item), if the document has it. */
function nodeLine(
  doc: Document,
  lines: LineCounter,
  path: readonly (string | number)[],
): number | undefined {
  const node = doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
  return node?.range ? lines.linePos(node.range[0]).line : undefined;
}

/** The file line of the node at `path`, or of its nearest ancestor the document has. */
function lineAt(
  doc: Document,
  lines: LineCounter,
  path: readonly (string | number)[],
): number | undefined {
  for (let length = path.length; length > 0; length--) {
    const node = doc.getIn(path.slice(0, length), true) as { range?: [number, number, number] };
    if (node?.range) return lines.linePos(node.range[0]).line;
  }
  return undefined;
}

const lineField = (line: number | undefined) => (line === undefined ? {} : { line });

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
    missingAt: new Map(),
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

  let policyLine: number | undefined;
  let lineOf: LineOf = () => undefined;
  /** Label settings: the line of a path's node, or of its nearest written ancestor. */
  let tarsyLineOf: LabelLineOf = () => undefined;
  const tarsyRaw = readYaml(tarsyFile, state, (doc, lines) => {
    policyLine = firstLineOf(doc, lines, ["authorization", "policy"]);
    lineOf = (file, path) => (file === tarsyFile ? nodeLine(doc, lines, path) : undefined);
    tarsyLineOf = (path) => lineAt(doc, lines, path);
  });
  const tarsy = parseEntry(TarsyFileSchema, tarsyRaw ?? {}, tarsyFile, []);
  state.issues.push(...tarsy.issues);
  state.ignored.push(...tarsy.ignored);
  const top = tarsy.data ?? {};

  let providersLineOf: LabelLineOf = () => undefined;
  const providersRaw = readYaml(providersFile, state, (doc, lines) => {
    providersLineOf = (path) => lineAt(doc, lines, path);
  });
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
  const rawSystem = section(SystemSchema, top.system, "system");
  // The Go TARSy's top-level `retention:`: each of its keys unless `system.retention` sets it.
  const topRetention = section(RetentionSchema, top.retention, "retention");
  const system = toSystem(
    builtinSystem(),
    topRetention
      ? { ...rawSystem, retention: { ...topRetention, ...rawSystem?.retention } }
      : rawSystem,
  );
  const authorization = toAuthorization(
    builtinAuthorization(),
    section(AuthorizationSchema, top.authorization, "authorization"),
  );
  if (top.authorization !== undefined && top.authorization !== null) {
    for (const [path, message, line] of authorizationProblems(authorization, policyLine)) {
      // A policy line's problem is at that line of the file (not the policy key's).
      state.issues.push({
        file: tarsyFile,
        path: `authorization.${path}`,
        message,
        ...lineField(line),
      });
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

  const skills = loadSkills(options.configDir);
  state.issues.push(...skills.issues);

  const fallbackLists = toFallbackLists(
    section(FallbackListsSchema, top.fallback_lists, "fallback_lists"),
  );

  const labelMaps = loadLabelMaps(top.label_maps, tarsyFile, tarsyLineOf);
  state.issues.push(...labelMaps.issues);
  if (labelMaps.builtinReplaced) {
    state.warnings.push({
      file: tarsyFile,
      path: "label_maps.builtin",
      message:
        "replaces the built-in label map (watch, action, noise) whole; its instructions and labels are not merged",
    });
  }

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
    skills: skills.skills,
    labelMaps: labelMaps.catalog,
    fallbackLists,
    sources,
  };
  state.issues.push(...validateReferences(config, invalid, lineOf));
  state.issues.push(...fallbackListIssues(config, tarsyFile, invalid, lineOf));
  state.issues.push(...validateSkillReferences(config));
  state.issues.push(...composeTypeIssues(config, lineOf));
  state.issues.push(...labelSelectorIssues(config, tarsyFile, tarsyLineOf));
  state.issues.push(...vertexEnvIssues(config, options.env));
  state.issues.push(...systemIssues(config.system, options.env, tarsyFile));
  if (options.credentialEnv) {
    state.issues.push(...fallbackCredentialIssues(config, options.credentialEnv));
  }
  // Reasoning effort and prompt caching say on which line the bad value is.
  state.issues = state.issues.map((issue) => {
    if (issue.line !== undefined) return issue;
    const effort = /^llm_providers\.(.+)\.reasoning_effort$/.exec(issue.path);
    if (issue.file === providersFile && effort?.[1]) {
      return {
        ...issue,
        ...lineField(providersLineOf(["llm_providers", effort[1], "reasoning_effort"])),
      };
    }
    if (issue.file === tarsyFile && issue.path.startsWith("system.prompt_caching")) {
      return { ...issue, ...lineField(tarsyLineOf(issue.path.split("."))) };
    }
    return issue;
  });
  state.warnings.push(...ignoredWarnings(state.ignored));
  state.warnings.push(...apiKeyWarnings(config, options.env));
  state.warnings.push(...fallbackProvidersDeprecations(config));
  state.warnings.push(...nativeToolFallbackWarnings(config));
  state.warnings.push(...disabledServerWarnings(config));
  state.warnings.push(...subAgentWarnings(config));
  state.warnings.push(...agentTypeWarnings(config));
  // An empty required value whose variable is unset: say which variable.
  const issues = state.issues.map((issue) => {
    const variables = state.missingAt.get(`${issue.file}\u0000${issue.path}`);
    if (!variables) return issue;
    const names = variables.map((v) => `"${v}"`).join(", ");
    const verb = variables.length === 1 ? "is" : "are";
    return {
      ...issue,
      message: `${issue.message} (environment variable ${names} ${verb} not set)`,
    };
  });
  // Every issue of a file names its line: the setting's own, or its nearest written ancestor's.
  const lineIn = (file: string) =>
    file === tarsyFile ? tarsyLineOf : file === providersFile ? providersLineOf : undefined;
  const located = issues.map((issue) => {
    const lineOfPath = issue.line === undefined ? lineIn(issue.file) : undefined;
    return lineOfPath ? { ...issue, ...lineField(lineOfPath(pathSegments(issue.path))) } : issue;
  });
  if (located.length > 0) throw new ConfigError(located, state.warnings);
  return { config, warnings: state.warnings };
}

/** `a.b[0].c` → `["a", "b", 0, "c"]` (the inverse of `formatPath` for plain names). */
function pathSegments(path: string): (string | number)[] {
  return path
    .split(".")
    .flatMap((part) => part.split(/\[(\d+)\]/).filter((piece) => piece !== ""))
    .map((piece) => (/^\d+$/.test(piece) ? Number(piece) : piece));
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

/**
 * One warning per ignored key name and file, naming every place it appears. Keys the Go TARSy
 * knows (the `UNSUPPORTED_KEYS` table) say what they would do and which issue brings them.
 */
function ignoredWarnings(ignored: readonly IgnoredKey[]): ConfigWarning[] {
  const groups = new Map<string, { items: IgnoredKey[]; row: UnsupportedKey | undefined }>();
  for (const item of ignored) {
    const row = unsupportedKeyAt(item.path);
    const key = `${item.file}\u0000${item.key}\u0000${row?.does ?? ""}`;
    const group = groups.get(key) ?? { items: [], row };
    group.items.push(item);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ items, row }) => {
    const first = items[0] as IgnoredKey;
    const path = items.map((i) => i.path).join(", ");
    if (!row)
      return { file: first.file, path, message: `"${first.key}" is not a known setting; ignored` };
    return {
      file: first.file,
      path,
      message: `"${first.key}" is not supported yet (in the Go TARSy: ${row.does}; planned in #${row.issue}); ignored`,
      unsupported: { key: row.path, does: row.does, issue: row.issue },
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
