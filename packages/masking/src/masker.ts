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
  /**
   * Masks what it recognises; content it cannot parse comes back unchanged. `nested` masks a
   * text found inside the content (a document held in a string) with the whole plan; its
   * redactions are counted by the plan, not in this masker's outcome.
   */
  mask(content: string, nested?: NestedMasker): MaskOutcome;
}

/** Masks a text found inside another with the whole masking plan. */
export type NestedMasker = (text: string) => MaskOutcome;
