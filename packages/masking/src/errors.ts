/** Base class of every error this package throws; `code` tells them apart. */
export abstract class MaskingError extends Error {
  abstract readonly code: MaskingErrorCode;
}

export type MaskingErrorCode =
  | "masking_invalid_pattern"
  | "masking_unknown_pattern"
  | "masking_unknown_group"
  | "masking_invalid_config"
  | "masking_input_too_deep";

/** A regular expression (built-in override or custom pattern) that does not compile. */
export class InvalidPatternError extends MaskingError {
  readonly code = "masking_invalid_pattern" as const;
  constructor(
    readonly patternName: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`masking pattern "${patternName}" is invalid: ${reason}`, options);
    this.name = "InvalidPatternError";
  }
}

/** A config names a pattern that is neither a built-in regex nor a code masker. */
export class UnknownPatternError extends MaskingError {
  readonly code = "masking_unknown_pattern" as const;
  constructor(readonly patternName: string) {
    super(`unknown masking pattern "${patternName}"`);
    this.name = "UnknownPatternError";
  }
}

/** A config names a pattern group that does not exist. */
export class UnknownGroupError extends MaskingError {
  readonly code = "masking_unknown_group" as const;
  constructor(readonly groupName: string) {
    super(`unknown masking pattern group "${groupName}"`);
    this.name = "UnknownGroupError";
  }
}

/** A masking config object that does not have the expected shape. */
export class InvalidMaskingConfigError extends MaskingError {
  readonly code = "masking_invalid_config" as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "InvalidMaskingConfigError";
  }
}

/**
 * Content nests Kubernetes Lists deeper than the masker follows, with a Secret somewhere below
 * the bound: thrown instead of letting that Secret through (tool results then fail closed).
 */
export class MaskingInputTooDeepError extends MaskingError {
  readonly code = "masking_input_too_deep" as const;
  constructor(readonly maxDepth: number) {
    super(`Kubernetes Lists nested deeper than ${maxDepth} levels hold a Secret`);
    this.name = "MaskingInputTooDeepError";
  }
}
