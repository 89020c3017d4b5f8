import {
  BUILTIN_MASKING_PATTERNS,
  BUILTIN_PATTERN_GROUPS,
  BUILTIN_PATTERN_PREFILTERS,
} from "./builtin-patterns.ts";
import {
  type AlertMaskingConfig,
  AlertMaskingConfigSchema,
  type MaskingPatternDefinition,
  type ServerMaskingConfig,
  ServerMaskingConfigSchema,
} from "./config.ts";
import { InvalidMaskingConfigError, MaskingError } from "./errors.ts";
import { createKubernetesSecretMasker } from "./kubernetes/secret-masker.ts";
import type { CodeMasker } from "./masker.ts";
import {
  buildPlan,
  compileCatalog,
  type MaskingPlan,
  type PatternCatalog,
  type RedactionListener,
} from "./plan.ts";
import { createSecretAssignmentMasker } from "./structure/assignments.ts";
import { createStructuredSecretMasker } from "./structure/field-masker.ts";

/** What a tool result becomes when masking fails: never the raw content. */
export const TOOL_RESULT_REDACTED_NOTICE =
  "[REDACTED: data masking failure — tool result could not be safely processed]";

export interface MaskResult {
  content: string;
  /** Number of values replaced (1 when the whole content was replaced by the notice). */
  redactions: number;
  /** True when masking threw: the content is the redaction notice (tool results) or the input (alerts). */
  failed: boolean;
}

/** The subset of a pino logger this package uses. */
export interface MaskingLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface MaskToolResultOptions {
  /** Only used to label log lines. */
  serverId?: string;
  toolName?: string;
}

export interface MaskingService {
  /** Masks an MCP tool result. FAIL-CLOSED: on any error the content is replaced by a notice. */
  maskToolResult(
    content: string,
    serverMasking: ServerMaskingConfig | null | undefined,
    opts?: MaskToolResultOptions,
  ): MaskResult;
  /** Masks alert data before it is stored. FAIL-OPEN: on an internal error the input is returned. */
  maskAlertData(data: string, alertMasking: AlertMaskingConfig | null | undefined): MaskResult;
  /** How many distinct configs are cached and how many compilations ever ran. */
  cacheStats(): { entries: number; compilations: number };
}

export interface CreateMaskingServiceOptions {
  logger?: MaskingLogger;
  /** Patterns from config that override or add to the built-ins (same shape). */
  patterns?: Record<string, MaskingPatternDefinition>;
  /** Groups from config that override or add to the built-in groups. */
  patternGroups?: Record<string, string[]>;
  /** Extra structural maskers (the built-in ones are always registered). */
  codeMaskers?: readonly CodeMasker[];
  /** Bound of the per-config plan cache (least recently used evicted). Default 256. */
  maxCachedConfigs?: number;
  /**
   * Told, per masking call, how many values each pattern (or code masker) replaced: its name
   * as configured (e.g. `kubernetes_secret`, a custom pattern's name), for metrics.
   */
  onRedaction?: RedactionListener;
}

type CacheEntry = { plan: MaskingPlan } | { error: unknown };

const NOOP_LOGGER: MaskingLogger = { warn() {}, error() {} };

/**
 * Creates the masking service. Built-in and configured patterns compile here, once; a config
 * given to `maskToolResult` / `maskAlertData` is resolved and its custom patterns compiled the
 * first time it is seen, then cached by value. Throws InvalidPatternError / UnknownPatternError
 * when the configured catalog itself is invalid.
 */
export function createMaskingService(options: CreateMaskingServiceOptions = {}): MaskingService {
  const logger = options.logger ?? NOOP_LOGGER;
  const maxEntries = Math.max(1, options.maxCachedConfigs ?? 256);
  const catalog: PatternCatalog = compileCatalog(
    { ...BUILTIN_MASKING_PATTERNS, ...options.patterns },
    { ...BUILTIN_PATTERN_GROUPS, ...options.patternGroups },
    [
      createKubernetesSecretMasker(),
      createStructuredSecretMasker(),
      createSecretAssignmentMasker(),
      ...(options.codeMaskers ?? []),
    ],
    Object.fromEntries(
      Object.entries(BUILTIN_PATTERN_PREFILTERS).filter(
        ([name]) => !options.patterns || !Object.hasOwn(options.patterns, name),
      ),
    ),
  );
  const cache = new Map<string, CacheEntry>();
  let compilations = 0;

  function planFor(key: string, build: () => MaskingPlan): MaskingPlan {
    let entry = cache.get(key);
    if (entry) {
      cache.delete(key);
      cache.set(key, entry);
    } else {
      compilations += 1;
      try {
        entry = { plan: build() };
      } catch (error) {
        entry = { error };
      }
      cache.set(key, entry);
      if (cache.size > maxEntries) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
    }
    if ("error" in entry) throw entry.error;
    return entry.plan;
  }

  function serverPlan(config: ServerMaskingConfig): MaskingPlan {
    const key = JSON.stringify([
      "server",
      config.pattern_groups ?? [],
      config.patterns ?? [],
      config.custom_patterns ?? [],
    ]);
    return planFor(key, () => {
      const parsed = ServerMaskingConfigSchema.safeParse(config);
      if (!parsed.success) {
        throw new InvalidMaskingConfigError(`invalid data_masking config: ${parsed.error.message}`);
      }
      return buildPlan(catalog, {
        groups: parsed.data.pattern_groups,
        patterns: parsed.data.patterns,
        custom: parsed.data.custom_patterns,
      });
    });
  }

  return {
    maskToolResult(content, serverMasking, opts = {}) {
      try {
        if (!serverMasking || serverMasking.enabled === false || content.length === 0) {
          return { content, redactions: 0, failed: false };
        }
        const outcome = serverPlan(serverMasking).apply(content, options.onRedaction);
        return { content: outcome.content, redactions: outcome.redactions, failed: false };
      } catch (error) {
        logger.error(
          { server_id: opts.serverId, tool_name: opts.toolName, ...describe(error) },
          "masking failed, tool result redacted (fail-closed)",
        );
        return { content: TOOL_RESULT_REDACTED_NOTICE, redactions: 1, failed: true };
      }
    },

    maskAlertData(data, alertMasking) {
      try {
        const parsed = AlertMaskingConfigSchema.safeParse(alertMasking ?? {});
        if (!parsed.success) {
          throw new InvalidMaskingConfigError(
            `invalid alert_masking config: ${parsed.error.message}`,
          );
        }
        if (!parsed.data.enabled || data.length === 0) {
          return { content: data, redactions: 0, failed: false };
        }
        const group = parsed.data.pattern_group;
        const plan = planFor(JSON.stringify(["alert", group]), () =>
          buildPlan(catalog, { groups: [group], patterns: [], custom: [] }),
        );
        const outcome = plan.apply(data, options.onRedaction);
        return { content: outcome.content, redactions: outcome.redactions, failed: false };
      } catch (error) {
        logger.warn(describe(error), "alert masking failed, alert data kept unmasked (fail-open)");
        return { content: data, redactions: 0, failed: true };
      }
    },

    cacheStats: () => ({ entries: cache.size, compilations }),
  };
}

/** Log fields for an error: its code and message, never the content being masked. */
function describe(error: unknown): { error_code: string; error: string } {
  if (error instanceof MaskingError) return { error_code: error.code, error: error.message };
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { error_code: "masking_internal_error", error: message.slice(0, 500) };
}
