import {
  BUILTIN_PATTERN_GROUPS,
  compilePattern,
  InvalidPatternError,
  isKnownPatternName,
} from "@tarsy/masking";

/** Names from `@tarsy/masking` that the YAML may reference. */
export function isKnownPatternGroup(name: string): boolean {
  return Object.hasOwn(BUILTIN_PATTERN_GROUPS, name);
}

/** A built-in regex pattern or a code masker (e.g. `kubernetes_secret`). */
export function isKnownMaskingPattern(name: string): boolean {
  return isKnownPatternName(name);
}

/**
 * Compiles a custom pattern exactly as the masking service will (TARSy's `(?i)` style flags,
 * replacement group references). Returns the problem, or undefined when the pattern is usable.
 */
export function customPatternProblem(
  name: string,
  pattern: string,
  replacement: string,
): string | undefined {
  try {
    compilePattern(name, pattern, replacement);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidPatternError) return `invalid pattern: ${error.reason}`;
    return error instanceof Error ? error.message : String(error);
  }
}
