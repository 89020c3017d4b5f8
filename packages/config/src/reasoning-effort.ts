import type { LlmProviderConfig, ReasoningEffort } from "./types.ts";

/** Major and minor of a `<prefix><major>[.<minor>]` model name (`gpt-5.6-sol` → 5, 6). */
function version(model: string, prefix: RegExp): { major: number; minor: number } | null {
  const m = prefix.exec(model);
  if (!m) return null;
  return { major: Number(m[1]), minor: m[2] === undefined ? 0 : Number(m[2]) };
}

const atLeast = (v: { major: number; minor: number }, major: number, minor: number) =>
  v.major !== major ? v.major > major : v.minor >= minor;

/**
 * Models whose provider takes a reasoning effort and that the Go TARSy sends `high` to when
 * none is configured: GPT-5.6+ (not -chat/-main), Grok 4.6+, Gemini 3.8+ (not image models),
 * Claude 4.8+.
 */
export function takesDefaultReasoningEffort(model: string): boolean {
  const name = model.toLowerCase();
  const gpt = version(name, /^gpt-(\d+)(?:\.(\d+))?/);
  if (gpt) return atLeast(gpt, 5, 6) && !name.includes("-chat") && !name.includes("-main");
  const grok = version(name, /^grok-(\d+)(?:\.(\d+))?/);
  if (grok) return atLeast(grok, 4, 6);
  const gemini = version(name, /^gemini-(\d+)(?:\.(\d+))?/);
  if (gemini) return atLeast(gemini, 3, 8) && !name.includes("image");
  const claude = /^claude-[a-z]+-(\d+)(?:[.-](\d+))?(?:-\d{8})?$/.exec(name);
  if (claude) {
    return atLeast({ major: Number(claude[1]), minor: Number(claude[2] ?? 0) }, 4, 8);
  }
  return false;
}

/**
 * The effort sent for a provider: the configured one, else `high` for the models that take a
 * default (as the Go TARSy does), else none (the provider's own default).
 */
export function effectiveReasoningEffort(
  provider: Pick<LlmProviderConfig, "model" | "reasoning_effort">,
): ReasoningEffort | undefined {
  if (provider.reasoning_effort) return provider.reasoning_effort;
  return takesDefaultReasoningEffort(provider.model) ? "high" : undefined;
}
