export {
  BUILTIN_CODE_MASKERS,
  BUILTIN_MASKING_PATTERNS,
  BUILTIN_PATTERN_GROUPS,
  isKnownPatternName,
} from "./builtin-patterns.ts";
export {
  type AlertMaskingConfig,
  AlertMaskingConfigSchema,
  type CustomMaskingPattern,
  CustomMaskingPatternSchema,
  type MaskingPatternDefinition,
  type ServerMaskingConfig,
  ServerMaskingConfigSchema,
} from "./config.ts";
export {
  InvalidMaskingConfigError,
  InvalidPatternError,
  MaskingError,
  type MaskingErrorCode,
  MaskingInputTooDeepError,
  UnknownGroupError,
  UnknownPatternError,
} from "./errors.ts";
export {
  createKubernetesSecretMasker,
  MASKED_SECRET_VALUE,
  MAX_LIST_DEPTH,
  maskKubernetesSecrets,
} from "./kubernetes/secret-masker.ts";
export type { CodeMasker, MaskOutcome } from "./masker.ts";
export type { RedactionListener } from "./plan.ts";
export { type CompiledPattern, compilePattern, validateCustomPattern } from "./regex.ts";
export {
  type CreateMaskingServiceOptions,
  createMaskingService,
  type MaskingLogger,
  type MaskingService,
  type MaskResult,
  type MaskToolResultOptions,
  TOOL_RESULT_REDACTED_NOTICE,
} from "./service.ts";
export {
  createSecretAssignmentMasker,
  maskSecretAssignments,
} from "./structure/assignments.ts";
export {
  createStructuredSecretMasker,
  MASKED_FIELD_VALUE,
  maskStructuredSecrets,
} from "./structure/field-masker.ts";
export { isSecretName } from "./structure/names.ts";
