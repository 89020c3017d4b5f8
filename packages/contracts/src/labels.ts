import { z } from "zod";

/**
 * Session labels: a closed list of tags the executive summary picks from the active label map
 * (`label_maps` in tarsy.yaml). Stored names are the map's canonical spelling.
 */

/** A label name or a label map's name: a letter, then letters, digits, `_` or `-`. */
export const LABEL_TOKEN_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;

export const LabelTokenSchema = z
  .string()
  .regex(LABEL_TOKEN_PATTERN, "must start with a letter and hold only letters, digits, _ or -");

/**
 * A session's labels. Null: not labelled (in progress, no executive summary, or its `LABELS:`
 * line could not be read); `[]`: the summary applied none.
 */
export const SessionLabelsSchema = z.array(z.string()).nullable();
export type SessionLabels = z.infer<typeof SessionLabelsSchema>;

/** The reserved name of the built-in label map (`watch`, `action`, `noise`; one at most). */
export const BUILTIN_LABEL_MAP = "builtin";
