/** Lines of a YAML text as the block scanner reads them, and searches bounded by a line. */

/**
 * The lines of the text, as parallel arrays (no object per line): where each starts, its
 * leading spaces, where its content ends (no `\r`, no trailing blanks), and flags.
 */
export class Lines {
  readonly count: number;
  readonly start: Int32Array;
  readonly indent: Int32Array;
  readonly end: Int32Array;
  readonly flags: Uint8Array;

  constructor(text: string) {
    let count = 1;
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
    this.count = count;
    this.start = new Int32Array(count);
    this.indent = new Int32Array(count);
    this.end = new Int32Array(count);
    this.flags = new Uint8Array(count);
    let start = 0;
    const length = text.length;
    for (let l = 0; l < count; l++) {
      let newline = text.indexOf("\n", start);
      if (newline === -1) newline = length;
      let indent = 0;
      while (text.charCodeAt(start + indent) === 32) indent++;
      let end = newline;
      while (end > start + indent) {
        const c = text.charCodeAt(end - 1);
        if (c === 32 || c === 13 || c === 9) end--;
        else break;
      }
      const first = text.charCodeAt(start + indent);
      const empty = end === start + indent;
      this.start[l] = start;
      this.indent[l] = indent;
      this.end[l] = end;
      this.flags[l] = empty ? EMPTY : first === 35 ? COMMENT : first === 9 ? TAB : 0;
      start = newline + 1;
    }
  }
}

export const EMPTY = 1;
export const COMMENT = 2;
export const TAB = 4;

/** `text.indexOf(needle, from)` that never looks past `lineEnd` (a miss costs one line, not the text). */
export function indexInLine(text: string, needle: string, from: number, lineEnd: number): number {
  const first = needle.charCodeAt(0);
  const last = lineEnd - needle.length;
  for (let i = from; i <= last; i++) {
    if (text.charCodeAt(i) === first && text.startsWith(needle, i)) return i;
  }
  return -1;
}

/** End of a plain scalar on one line: before a ` #` comment, trailing spaces dropped. */
export function plainEnd(text: string, pos: number, lineEnd: number): number {
  let end = lineEnd;
  const hash = indexInLine(text, " #", pos, lineEnd);
  if (hash !== -1) end = hash;
  while (end > pos && text.charCodeAt(end - 1) === 32) end--;
  return end;
}
