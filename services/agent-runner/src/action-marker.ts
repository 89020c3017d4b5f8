/**
 * An action agent ends its answer with a line holding only YES or NO: whether it executed an
 * action tool (the Go TARSy's contract). The line is stripped from the stored final analysis
 * and becomes `actions_executed`. Fail-safe: a missing or unreadable line is `null` (unknown),
 * never a claim that an action happened or did not, and the text is kept as written.
 */
export interface ActionMarker {
  /** The answer without its YES/NO line (unchanged when there was none). */
  text: string;
  /** true for YES, false for NO, null when the last line is neither. */
  actionsExecuted: boolean | null;
}

/** Markdown a model may wrap the word in despite being told not to (`**YES**`, `` `NO` ``). */
const DECORATION = /^[\s*_`#>~-]+|[\s*_`#>~.!-]+$/g;

export function parseActionMarker(answer: string): ActionMarker {
  const trimmed = answer.replace(/\s+$/, "");
  const cut = trimmed.lastIndexOf("\n");
  const lastLine = trimmed.slice(cut + 1);
  const word = lastLine.replace(DECORATION, "").toUpperCase();
  if (word !== "YES" && word !== "NO") return { text: answer, actionsExecuted: null };
  return {
    text: cut < 0 ? "" : trimmed.slice(0, cut).replace(/\s+$/, ""),
    actionsExecuted: word === "YES",
  };
}
