/**
 * The loopback Claude of the prompt-caching scenarios (e2e and browser): it reports usage as
 * the Anthropic API does for the `testdata/prompt-caching` investigation. The loop's first call
 * asks for the pods and writes the tool prefix to the cache; the second reads it and answers;
 * the executive summary is a one-shot without tools.
 */
import { anthropicStream } from "../../llm-service/test/fakes/anthropic.ts";
import {
  type RecordedRequest,
  type Responder,
  respondSse,
} from "../../llm-service/test/fakes/http.ts";

/** The tool schemas the provider caches (what the fake reports written, then read). */
export const PREFIX = 4000;

export type ClaudeBody = {
  tools?: Record<string, unknown>[];
  messages: { content: string | { type: string }[] }[];
  output_config?: unknown;
};

export const cachingClaude: Responder = async (res, req: RecordedRequest) => {
  const body = req.body as ClaudeBody;
  const answered = body.messages.some(
    (m) => Array.isArray(m.content) && m.content.some((c) => c.type === "tool_result"),
  );
  const spec = !body.tools?.length
    ? { text: ["Payments API crash loop: heap too large."], usage: { input: 100, output: 20 } }
    : answered
      ? {
          text: ["The payments API crashes: its heap exceeds the 2Gi limit."],
          usage: { input: 250, output: 48, cacheRead: PREFIX },
        }
      : {
          toolUses: [
            { id: "toolu_1", name: "demo-cluster__get_pods", input: '{"namespace":"payments"}' },
          ],
          usage: { input: 200, output: 50, cacheCreation: PREFIX },
        };
  await respondSse(anthropicStream(spec))(res, req);
};
