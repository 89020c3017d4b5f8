import { BUILTIN_LABEL_MAP, LABEL_TOKEN_PATTERN } from "@tarsy/contracts";
import { z } from "zod";
import type { ConfigIssue } from "./errors.ts";
import { formatPath } from "./interpolate.ts";
import type { IgnoredKey } from "./parse.ts";
import { parseEntry } from "./parse.ts";
import type { ChainConfig, TarsyConfig } from "./types.ts";

/**
 * Session labels (`label_maps`): a catalog of closed tag lists the executive summary encodes
 * its verdict with, on a last `LABELS:` line. `defaults.label_map` then `chain.label_map`
 * select one (the last one set wins); neither set is the reserved `builtin` map.
 */

/** One tag of a map: its canonical name and what it means (shown to the LLM). */
export interface LabelSpec {
  label: string;
  description: string;
}

/** One entry of the `label_maps` catalog; `labels` keeps the order the YAML writes. */
export interface LabelMapConfig {
  /** Several labels on one session (true), or at most one (false, the default). */
  multi: boolean;
  /** How to pick; empty: apply the labels whose descriptions match, or none. */
  instructions?: string;
  labels: LabelSpec[];
  /** The shipped built-in map (false for YAML entries, a YAML `builtin` included). */
  builtin: boolean;
}

const TOKEN_HINT = "must start with a letter and hold only letters, digits, _ or -";

const LabelToken = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .regex(LABEL_TOKEN_PATTERN, TOKEN_HINT);

const LabelSpecSchema = z.strictObject({
  label: LabelToken,
  description: z.string().trim().min(1, "must not be empty"),
});

export const LabelMapSchema = z
  .strictObject({
    multi: z.boolean().default(false),
    instructions: z.string().optional(),
    labels: z.array(LabelSpecSchema).min(1, "must list at least one label"),
  })
  .superRefine((map, ctx) => {
    const seen = new Map<string, number>();
    map.labels.forEach((spec, index) => {
      const key = spec.label.toLowerCase();
      const first = seen.get(key);
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["labels", index, "label"],
          message: `duplicate label "${spec.label}" (labels[${first}] has it; names are case-insensitive)`,
        });
      } else seen.set(key, index);
    });
  });

/** A `label_map` selector: a catalog name. */
export const LabelMapSelectorSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .regex(LABEL_TOKEN_PATTERN, TOKEN_HINT);

/** Keys a label map or a label may hold, with the likely intended key for common slips. */
const KEY_HINTS: Readonly<Record<string, string>> = {
  name: "label",
  labels_map: "labels",
  instruction: "instructions",
  multiple: "multi",
  desc: "description",
};

const BUILTIN_INSTRUCTIONS = `These labels say what should happen to the alert next. They are not about what automated tools already did, and not about the review status.

Pick at most one of watch, action and noise. When the report contradicts itself, pick watch rather than action, and watch rather than noise when unsure. When the report clearly concludes that the alert can be closed with nothing left to do, pick noise rather than no label.

There is no "none" or "ignore" label. Leaving the LABELS line out is not a verdict that the alert can be closed: people still read the summary first.`;

const BUILTIN_LABELS: readonly LabelSpec[] = [
  {
    label: "watch",
    description: `For: the subject still looks wrong, or the evidence is thin; nobody needs to intervene now, but someone should look again if it continues.
Not for: an alert the analysis already concluded can be closed with nothing to follow up (that is noise). Wanting to tune the detector is no reason to keep an alert open as watch.`,
  },
  {
    label: "action",
    description: `For: a person has to intervene on the affected system (fix the failing workload, approve an emergency change, run a runbook step that was not automated).
Not for: closing or acknowledging the alert, filing a backlog ticket, tuning detection rules, or "nothing to fix, it was benign". Unrelated to whether automated actions were executed. An alert closable with no work is noise.`,
  },
  {
    label: "noise",
    description: `For: the alert can be closed with no human work left: a false positive, expected or maintenance activity, already recovered with nothing to do, or a duplicate of something known to be benign. A passing "tune this later" does not prevent noise.
Not for: anything where a person should look again (watch), intervene (action), or must do a follow-up (file a ticket, change a rule) before the alert is done. When unsure, pick watch, never noise. Leaving the line out is not noise.`,
  },
];

/** The shipped exclusive map: `watch`, `action`, `noise`. */
export function builtinLabelMap(): LabelMapConfig {
  return {
    multi: false,
    instructions: BUILTIN_INSTRUCTIONS,
    labels: BUILTIN_LABELS.map((spec) => ({ ...spec })),
    builtin: true,
  };
}

/** An issue with the file line of its path, when the document has the node. */
export type LineOf = (path: readonly (string | number)[]) => number | undefined;

export interface LabelMapsOutcome {
  catalog: Map<string, LabelMapConfig>;
  issues: ConfigIssue[];
  /** YAML defined `label_maps.builtin` (it replaces the shipped map whole). */
  builtinReplaced: boolean;
}

function keyIssue(item: IgnoredKey, lineOf: LineOf): ConfigIssue {
  const segments = item.path.replace(/\[(\d+)\]/g, ".$1").split(".");
  const hint = KEY_HINTS[item.key];
  const line = lineOf(segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s)));
  return {
    file: item.file,
    path: item.path,
    message: `unknown key "${item.key}"${hint ? ` (did you mean "${hint}"?)` : ""}`,
    ...(line !== undefined && { line }),
  };
}

/**
 * The catalog from tarsy.yaml's `label_maps`, with `builtin` added unless YAML replaces it.
 * Unknown keys in a map are errors here (a misspelt `label` must not silently drop a tag).
 */
export function loadLabelMaps(raw: unknown, file: string, lineOf: LineOf): LabelMapsOutcome {
  const catalog = new Map<string, LabelMapConfig>();
  const issues: ConfigIssue[] = [];
  const withLine = (issue: ConfigIssue, path: readonly (string | number)[]): ConfigIssue => {
    const line = lineOf(path);
    return line === undefined ? issue : { ...issue, line };
  };
  let builtinReplaced = false;
  if (raw !== undefined && raw !== null) {
    if (typeof raw !== "object" || Array.isArray(raw)) {
      issues.push(
        withLine({ file, path: "label_maps", message: "must be a mapping of label map names" }, [
          "label_maps",
        ]),
      );
    } else {
      for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
        if (!LABEL_TOKEN_PATTERN.test(name)) {
          issues.push(
            withLine(
              { file, path: `label_maps.${name}`, message: `label map name ${TOKEN_HINT}` },
              ["label_maps", name],
            ),
          );
          continue;
        }
        const parsed = parseEntry(LabelMapSchema, value ?? {}, file, ["label_maps", name]);
        issues.push(...parsed.ignored.map((item) => keyIssue(item, lineOf)));
        for (const issue of parsed.issues) {
          issues.push(withLine(issue, pathSegments(issue.path)));
        }
        if (parsed.data === undefined || parsed.ignored.length > 0) continue;
        if (name === BUILTIN_LABEL_MAP) builtinReplaced = true;
        const instructions = parsed.data.instructions?.trim();
        catalog.set(name, {
          multi: parsed.data.multi,
          ...(instructions && { instructions }),
          labels: parsed.data.labels,
          builtin: false,
        });
      }
    }
  }
  if (!catalog.has(BUILTIN_LABEL_MAP) && !builtinReplaced) {
    catalog.set(BUILTIN_LABEL_MAP, builtinLabelMap());
  }
  return { catalog, issues, builtinReplaced };
}

function pathSegments(path: string): (string | number)[] {
  return path
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .filter(Boolean)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** Every `label_map` selector names a catalog entry (`builtin` always exists). */
export function labelSelectorIssues(
  config: Pick<TarsyConfig, "labelMaps" | "defaults" | "chains" | "sources">,
  file: string,
  lineOf: LineOf,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const check = (selector: string | undefined, path: (string | number)[]) => {
    if (selector === undefined || config.labelMaps.has(selector)) return;
    const line = lineOf(path);
    const known = [...config.labelMaps.keys()].map((n) => `"${n}"`).join(", ");
    issues.push({
      file,
      path: formatPath(path),
      message: `unknown label map "${selector}" (label_maps has ${known})`,
      ...(line !== undefined && { line }),
    });
  };
  check(config.defaults.label_map, ["defaults", "label_map"]);
  for (const chain of config.chains.values()) {
    if (config.sources.chains.get(chain.id) !== file) continue;
    check(chain.label_map, ["agent_chains", chain.id, "label_map"]);
  }
  return issues;
}

/** The active map's name and entry: the last selector set (defaults, then the chain), else `builtin`. */
export function resolveLabelMap(
  config: Pick<TarsyConfig, "labelMaps" | "defaults">,
  chain: Pick<ChainConfig, "label_map"> | undefined,
): { name: string; map: LabelMapConfig } {
  const name = chain?.label_map || config.defaults.label_map || BUILTIN_LABEL_MAP;
  const map = config.labelMaps.get(name) ?? config.labelMaps.get(BUILTIN_LABEL_MAP);
  return { name, map: map ?? builtinLabelMap() };
}
