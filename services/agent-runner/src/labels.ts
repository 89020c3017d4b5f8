/**
 * The executive summary's `LABELS:` last line, read leniently against the active label map.
 * Only the last non-empty line counts. A line without the prefix means no labels (`[]`, the
 * text unchanged); a prefixed line that names only labels of the map is stripped and gives
 * their canonical names, unique, in map order; anything else is a parse failure (the caller
 * reminds the model once, then fails open).
 */

export interface LabelMapForParse {
  multi: boolean;
  labels: readonly { label: string }[];
}

export type LabelsParse =
  | { kind: "absent"; text: string; labels: [] }
  | { kind: "parsed"; text: string; labels: string[] }
  | { kind: "invalid"; text: string; reason: string };

const PREFIX = /^LABELS\s*:\s*/i;
/** Emphasis a model wraps a whole line in (`**LABELS: watch**`, a code span). */
const WRAPPING = /^[*_`]+|[*_`]+$/g;

export function parseLabelsLine(text: string, map: LabelMapForParse): LabelsParse {
  const body = text.trimEnd();
  const cut = body.lastIndexOf("\n");
  const last = body.slice(cut + 1).trim();
  const line = last.replace(WRAPPING, "").trim();
  const prefix = PREFIX.exec(line);
  if (!prefix) return { kind: "absent", text, labels: [] };

  const byName = new Map(map.labels.map((spec, index) => [spec.label.toLowerCase(), index]));
  const found = new Set<number>();
  const tokens = line
    .slice(prefix[0].length)
    .split(",")
    .map((token) => token.trim())
    .filter(Boolean);
  for (const token of tokens) {
    let index = byName.get(token.toLowerCase());
    if (index === undefined && /[.;]$/.test(token)) {
      index = byName.get(token.slice(0, -1).toLowerCase());
    }
    if (index === undefined) {
      return { kind: "invalid", text, reason: `"${token}" is not a label of the map` };
    }
    found.add(index);
  }
  if (!map.multi && found.size > 1) {
    return { kind: "invalid", text, reason: "more than one label where at most one applies" };
  }
  const labels = [...found].sort((a, b) => a - b).map((i) => map.labels[i]?.label ?? "");
  const stripped = cut < 0 ? "" : body.slice(0, cut).trimEnd();
  return { kind: "parsed", text: stripped, labels };
}
