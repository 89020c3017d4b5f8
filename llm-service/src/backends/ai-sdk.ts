import { ConfigError, ContentBlockedError, EmptyResponseError } from "../errors.ts";
import {
  type Chunk,
  type ConversationMessage,
  type GenerateRequest,
  parseArguments,
  parseParametersSchema,
  type ReasoningBlock,
} from "../request.ts";
import { createToolNameMap, type ToolNameMap } from "../tool-names.ts";
import {
  modelFor,
  type ProviderCallOptions,
  type ProviderModel,
  thinkingOptions,
  wireFamily,
} from "./ai-sdk-models.ts";
import {
  degradedPlans,
  isBadRequest,
  markPrompt,
  markTools,
  mergeProviderOptions,
  type PromptCachePlan,
  promptCachePlan,
} from "./prompt-cache.ts";
import type { Backend, BackendContext, SecretLookup } from "./types.ts";
import type { VertexCredentialStore } from "./vertex-auth.ts";

type PromptMessage = ProviderCallOptions["prompt"][number];
type AssistantPart = Extract<PromptMessage, { role: "assistant" }>["content"][number];

/**
 * The signed (or redacted) thinking blocks an assistant message came with, as reasoning parts:
 * Anthropic requires them unchanged, before the tool_use blocks, when thinking is on.
 */
function replayedReasoning(message: ConversationMessage): AssistantPart[] {
  return message.reasoning.flatMap((block): AssistantPart[] => {
    if (block.signature) {
      return [
        {
          type: "reasoning",
          text: block.thinking,
          providerOptions: { anthropic: { signature: block.signature } },
        },
      ];
    }
    if (block.redacted_data) {
      return [
        {
          type: "reasoning",
          text: "",
          providerOptions: { anthropic: { redactedData: block.redacted_data } },
        },
      ];
    }
    return [];
  });
}

/** The conversation in the AI SDK's provider prompt format (LanguageModelV3Prompt). */
export function toProviderPrompt(
  messages: ConversationMessage[],
  names: ToolNameMap,
  options: { replayReasoning: boolean } = { replayReasoning: false },
): PromptMessage[] {
  return messages.map((message): PromptMessage => {
    switch (message.role) {
      case "system":
        return { role: "system", content: message.content };
      case "user":
        return { role: "user", content: [{ type: "text", text: message.content }] };
      case "assistant":
        return {
          role: "assistant",
          content: [
            ...(options.replayReasoning ? replayedReasoning(message) : []),
            ...(message.content ? [{ type: "text" as const, text: message.content }] : []),
            ...message.tool_calls.map((call) => ({
              type: "tool-call" as const,
              toolCallId: call.id,
              toolName: names.toProvider(call.name),
              input: parseArguments(call.arguments),
            })),
          ],
        };
      case "tool":
        return {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: message.tool_call_id,
              toolName: names.toProvider(message.tool_name),
              output: { type: "text", value: message.content },
            },
          ],
        };
      default: {
        const unreachable: never = message.role;
        throw new ConfigError(`unknown role ${String(unreachable)}`);
      }
    }
  });
}

/**
 * The multi-provider backend (config name "langchain", as in TARSy) on the Vercel AI SDK's
 * provider packages: OpenAI, Anthropic (extended thinking), Google, Vertex AI, xAI and
 * OpenAI-compatible endpoints, streaming text, reasoning and tool calls. It drives the
 * provider model's `doStream` directly: `streamText`'s extra stream layers cost 2–3× the
 * CPU per chunk and add nothing here (no tool execution, one step). The SDK does no
 * retries at this level: the server's retry loop owns them.
 */
export function createAiSdkBackend(options: {
  getSecret: SecretLookup;
  vertexCredentials: VertexCredentialStore;
}): Backend {
  return {
    name: "langchain",
    retriesTransientErrors: true,
    async *generate(request: GenerateRequest, ctx: BackendContext): AsyncIterable<Chunk> {
      const { llm_config: config } = request;
      if (!config.model) throw new ConfigError("llm_config.model is required");
      const model = await modelFor(config, options);
      const names = createToolNameMap(request.tools.map((t) => t.name));
      const family = wireFamily(config);
      const prompt = toProviderPrompt(request.messages, names, {
        replayReasoning: family === "anthropic",
      });
      const tools = request.tools.map((tool) => ({
        type: "function" as const,
        name: names.toProvider(tool.name),
        description: tool.description,
        inputSchema: parseParametersSchema(tool),
      }));
      const callWith = (cache: PromptCachePlan): ProviderCallOptions => ({
        prompt: markPrompt(prompt, cache),
        abortSignal: ctx.signal,
        providerOptions: mergeProviderOptions(thinkingOptions(config), cache.callOptions),
        ...(tools.length > 0 ? { tools: markTools(tools, cache) } : {}),
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
        ...(config.max_tokens !== undefined ? { maxOutputTokens: config.max_tokens } : {}),
      });
      const plan = promptCachePlan(request, family, config);
      const fallbacks = degradedPlans(plan);
      let stream: Awaited<ReturnType<ProviderModel["doStream"]>>["stream"];
      for (let attempt = 0; ; attempt++) {
        try {
          ({ stream } = await model.doStream(
            callWith(attempt === 0 ? plan : (fallbacks[attempt - 1] ?? plan)),
          ));
          break;
        } catch (err) {
          // A 400 on the cache markers: the same call with fewer markers, before any chunk.
          if (!isBadRequest(err) || attempt >= fallbacks.length) throw err;
          ctx.logger.warn(
            { provider: config.provider, model: config.model, attempt: attempt + 1 },
            "provider refused the prompt-cache markers (400); retrying with fewer",
          );
        }
      }
      let produced = false;
      const reasoning = new Map<string, ReasoningBlock>();
      for await (const part of stream as AsyncIterable<StreamPart>) {
        switch (part.type) {
          case "text-delta":
            if (part.delta) {
              produced = true;
              yield { text: { content: part.delta } };
            }
            break;
          case "reasoning-start": {
            const redacted = part.providerMetadata?.anthropic?.redactedData;
            reasoning.set(part.id, {
              thinking: "",
              signature: "",
              redacted_data: typeof redacted === "string" ? redacted : "",
            });
            break;
          }
          case "reasoning-delta": {
            const block = reasoning.get(part.id);
            const signature = part.providerMetadata?.anthropic?.signature;
            if (block) {
              block.thinking += part.delta;
              if (typeof signature === "string") block.signature = signature;
            }
            if (part.delta) {
              produced = true;
              yield { thinking: { content: part.delta } };
            }
            break;
          }
          case "reasoning-end": {
            // The complete signed block travels to the runner, which sends it back unchanged.
            const block = reasoning.get(part.id);
            reasoning.delete(part.id);
            if (block && (block.signature || block.redacted_data)) yield { reasoning: block };
            break;
          }
          case "tool-call":
            produced = true;
            yield {
              tool_call: {
                call_id: part.toolCallId,
                name: names.toCanonical(part.toolName),
                arguments: part.input || "{}",
              },
            };
            break;
          case "error":
            throw part.error;
          case "finish": {
            if (!produced && part.finishReason.unified === "content-filter") {
              throw new ContentBlockedError(
                `provider ${config.provider} blocked the request or answer (content filter): rephrase the prompt or review the alert data`,
              );
            }
            if (!produced) {
              throw new EmptyResponseError(
                `provider ${config.provider} returned an empty response`,
              );
            }
            yield { usage: normalizedUsage(part.usage) };
            break;
          }
          default:
            break;
        }
      }
    },
  };
}

/**
 * The usage in TARSy's terms: input_tokens is the uncached input. The AI SDK already splits
 * each provider's accounting (Anthropic reports uncached input and the cache apart; OpenAI and
 * Gemini report a prompt total that includes the cache) into noCache / cacheRead / cacheWrite.
 */
export function normalizedUsage(usage: FinishUsage) {
  const total = usage.inputTokens.total ?? 0;
  const cacheRead = usage.inputTokens.cacheRead ?? 0;
  const cacheWrite = usage.inputTokens.cacheWrite ?? 0;
  const uncached = usage.inputTokens.noCache ?? Math.max(0, total - cacheRead - cacheWrite);
  const output = usage.outputTokens.total ?? 0;
  return {
    input_tokens: uncached,
    output_tokens: output,
    total_tokens: total + output,
    thinking_tokens: usage.outputTokens.reasoning ?? 0,
    cache_read_tokens: cacheRead,
    cache_creation_tokens: cacheWrite,
  };
}

type FinishUsage = Extract<StreamPart, { type: "finish" }>["usage"];

/** LanguageModelV3StreamPart, as the provider model declares it. */
type StreamPart =
  Awaited<ReturnType<ProviderModel["doStream"]>>["stream"] extends ReadableStream<infer P>
    ? P
    : never;
