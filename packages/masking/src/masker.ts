/** The outcome of one masking step. */
export interface MaskOutcome {
  content: string;
  /** How many values were replaced. */
  redactions: number;
}

/**
 * A structural ("code") masker: parses the content instead of matching a regex, so it can tell
 * a Secret's data from a ConfigMap's. Runs before the regex patterns.
 */
export interface CodeMasker {
  /** The name configs use in `patterns` / `pattern_groups` (e.g. `kubernetes_secret`). */
  readonly name: string;
  /** Cheap pre-check (string search, no parsing). */
  appliesTo(content: string): boolean;
  /** Masks what it recognises; content it cannot parse comes back unchanged. */
  mask(content: string): MaskOutcome;
}
