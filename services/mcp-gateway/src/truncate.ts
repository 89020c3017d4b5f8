const encoder = new TextEncoder();

const byteLength = (s: string): number => encoder.encode(s).length;

export function truncationMarker(
  originalBytes: number,
  limitBytes: number,
  keptBytes: number,
): string {
  return `\n\n[TRUNCATED by mcp-gateway: the tool output was ${originalBytes} bytes; only the first ${keptBytes} bytes fit the ${limitBytes}-byte reply limit]`;
}

/**
 * Cuts `content` so that `encode(content')` fits in `limitBytes`, appending a visible marker.
 * `encode` builds the whole reply around the content (so JSON escaping is accounted for).
 */
export function fitContent(
  content: string,
  limitBytes: number,
  encode: (content: string) => string,
): { content: string; truncated: boolean } {
  if (byteLength(encode(content)) <= limitBytes) return { content, truncated: false };
  const originalBytes = byteLength(content);
  const build = (chars: number): string => {
    let end = chars;
    // Never split a surrogate pair.
    const code = content.charCodeAt(end - 1);
    if (end > 0 && code >= 0xd800 && code <= 0xdbff) end -= 1;
    const kept = content.slice(0, end);
    return kept + truncationMarker(originalBytes, limitBytes, byteLength(kept));
  };
  let lo = 0;
  let hi = content.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (byteLength(encode(build(mid))) <= limitBytes) lo = mid;
    else hi = mid - 1;
  }
  return { content: build(lo), truncated: true };
}
