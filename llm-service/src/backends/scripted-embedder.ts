/** Dimensions of a scripted embedding when the request asks for the model's default (0). */
export const SCRIPTED_DEFAULT_DIMENSIONS = 768;

/** 32-bit FNV-1a over the UTF-16 code units of `text`. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The words of a text: lowercase runs of letters and digits, plus every compound of them
 * joined by `-`, `_`, `.` or `/` ("payments-api" gives "payments-api", "payments" and "api"),
 * so a service name matches both whole and by its parts.
 */
export function scriptedTokens(text: string): string[] {
  const lower = text.toLowerCase();
  const words = lower.match(/[\p{L}\p{N}]+/gu) ?? [];
  const compounds = lower.match(/[\p{L}\p{N}]+(?:[-_./][\p{L}\p{N}]+)+/gu) ?? [];
  return [...words, ...compounds];
}

/**
 * A deterministic embedding with no model behind it (tests, demos, `--llm-script` runs): each
 * word is hashed to one of `dimensions` coordinates with a hashed sign, the counts are summed
 * and the vector is L2-normalised. Texts sharing words have a high cosine similarity, equal
 * texts equal vectors. Values are float32 (what the wire carries), so a vector is the same
 * before and after a gRPC round trip.
 */
export function scriptedEmbedding(
  text: string,
  dimensions: number = SCRIPTED_DEFAULT_DIMENSIONS,
): number[] {
  const size = dimensions > 0 ? dimensions : SCRIPTED_DEFAULT_DIMENSIONS;
  const vector = new Float64Array(size);
  const tokens = scriptedTokens(text);
  // A text of punctuation only still gets a vector of its own.
  for (const token of tokens.length > 0 ? tokens : [text]) {
    const hash = fnv1a(token);
    const sign = fnv1a(`±${token}`) & 1 ? 1 : -1;
    vector[hash % size] = (vector[hash % size] ?? 0) + sign;
  }
  const norm = Math.hypot(...vector);
  return Array.from(vector, (v) => Math.fround(norm > 0 ? v / norm : 0));
}
