import type { CustomMaskingPattern, MaskingPatternDefinition } from "./config.ts";
import { UnknownGroupError, UnknownPatternError } from "./errors.ts";
import type { CodeMasker, MaskOutcome, NestedMasker } from "./masker.ts";
import { type CompiledPattern, compilePattern } from "./regex.ts";

/** How deep documents held in strings (held in strings …) are masked with the whole plan. */
const MAX_NESTED_DEPTH = 3;

/** Told how many values one pattern (or code masker) replaced, when it replaced any. */
export type RedactionListener = (pattern: string, count: number) => void;

/** The resolved, compiled form of one masking config: what runs on every call. */
export interface MaskingPlan {
  readonly codeMaskers: readonly CodeMasker[];
  readonly patterns: readonly CompiledPattern[];
  apply(content: string, onRedaction?: RedactionListener): MaskOutcome;
}

/** Everything a plan is built from: compiled once per service. */
export interface PatternCatalog {
  /** Compiled named patterns in application order. */
  readonly patterns: ReadonlyMap<string, CompiledPattern>;
  readonly groups: Record<string, readonly string[]>;
  readonly codeMaskers: ReadonlyMap<string, CodeMasker>;
}

export function compileCatalog(
  definitions: Record<string, MaskingPatternDefinition>,
  groups: Record<string, readonly string[]>,
  codeMaskers: readonly CodeMasker[],
  prefilters: Record<string, string | RegExp> = {},
): PatternCatalog {
  const patterns = new Map<string, CompiledPattern>();
  for (const [name, definition] of Object.entries(definitions)) {
    const prefilter = Object.hasOwn(prefilters, name) ? prefilters[name] : undefined;
    patterns.set(name, compilePattern(name, definition.pattern, definition.replacement, prefilter));
  }
  const maskers = new Map(codeMaskers.map((masker) => [masker.name, masker]));
  const catalog: PatternCatalog = { patterns, groups, codeMaskers: maskers };
  for (const [group, members] of Object.entries(groups)) {
    for (const member of members) {
      if (!patterns.has(member) && !maskers.has(member)) {
        throw new UnknownPatternError(`${member} (in group ${group})`);
      }
    }
  }
  return catalog;
}

/**
 * Resolves group and pattern names and compiles custom patterns. Order of application: code
 * maskers, then custom patterns (the config's explicit intent), then the selected built-ins in
 * catalog order (specific shapes before broad sweeps).
 */
export function buildPlan(
  catalog: PatternCatalog,
  selection: {
    groups: readonly string[];
    patterns: readonly string[];
    custom: readonly CustomMaskingPattern[];
  },
): MaskingPlan {
  const selected = new Set<string>();
  for (const group of selection.groups) {
    const members = Object.hasOwn(catalog.groups, group) ? catalog.groups[group] : undefined;
    if (!members) throw new UnknownGroupError(group);
    for (const member of members) selected.add(member);
  }
  for (const name of selection.patterns) {
    if (!catalog.patterns.has(name) && !catalog.codeMaskers.has(name)) {
      throw new UnknownPatternError(name);
    }
    selected.add(name);
  }

  const codeMaskers = [...catalog.codeMaskers.values()].filter((masker) =>
    selected.has(masker.name),
  );
  const patterns: CompiledPattern[] = selection.custom.map((custom) =>
    compilePattern(custom.name, custom.pattern, custom.replacement),
  );
  for (const [name, pattern] of catalog.patterns) if (selected.has(name)) patterns.push(pattern);

  const plan: MaskingPlan = {
    codeMaskers,
    patterns,
    apply(content: string, onRedaction?: RedactionListener): MaskOutcome {
      return applyPlan(content, onRedaction, 0);
    },
  };

  function applyPlan(
    content: string,
    onRedaction: RedactionListener | undefined,
    depth: number,
  ): MaskOutcome {
    let text = content;
    let redactions = 0;
    const nested: NestedMasker | undefined =
      depth < MAX_NESTED_DEPTH
        ? (inner) => {
            const outcome = applyPlan(inner, onRedaction, depth + 1);
            redactions += outcome.redactions;
            return outcome;
          }
        : undefined;
    for (const masker of codeMaskers) {
      if (!masker.appliesTo(text)) continue;
      const outcome = masker.mask(text, nested);
      text = outcome.content;
      redactions += outcome.redactions;
      if (outcome.redactions > 0) onRedaction?.(masker.name, outcome.redactions);
    }
    for (const pattern of patterns) {
      const outcome = pattern.apply(text);
      text = outcome.text;
      redactions += outcome.count;
      if (outcome.count > 0) onRedaction?.(pattern.name, outcome.count);
    }
    return { content: text, redactions };
  }
  return plan;
}
