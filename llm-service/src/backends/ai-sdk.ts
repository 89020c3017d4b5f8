import { ConfigError, ContentBlockedError, EmptyResponseError } from "../errors.ts";
import {
  type Chunk,
  type ConversationMessage,
  type GenerateRequest,
  parseArguments,
  parseParametersSchema,
} from "../request.ts";
import type {
  ExecutionSignatures,
  ReasoningBlock,
  ThoughtSignatureCache,
} from "../thought-signatures.ts";
import { createToolNameMap, type ToolNameMap } from "../tool-names.ts";
import {
  modelFor,
  type ProviderCallOptions,
  type ProviderModel,
  thinkingOptions,
  wireFamily,
} from "./ai-sdk-models.ts";
import type { Backend, BackendContext, SecretLookup } from "./types.ts";
import type { VertexCredentialStore } from "./vertex-auth.ts";

type PromptMessage = ProviderCallOptions["prompt"][number];
type AssistantPart = Extract<PromptMessage, { role: "assistant" }>["content"][number];

/** Anthropic thinking blocks to replay before the tool calls of an earlier turn. */
function replayedReasoning(
  message: ConversationMessage,
  signatures: ExecutionSignatures | undefined,
): AssistantPart[] {
  const blocks = message.tool_calls
    .map((call) => signatures?.reasoningByCallId.get(call.id))
    .find((found) => found !== undefined);
  return (blocks ?? []).map((block) => ({
    type: "reasoning" as const,
    text: block.text,
    providerOptions: {
      anthropic: block.signature
        ? { signature: block.signature }
        : { redactedData: block.redactedData ?? "" },
    },
  }));
}

/** The conversation in the AI SDK's provider prompt format (LanguageModelV3Prompt). */
export function toProviderPrompt(
  messages: ConversationMessage[],
  names: ToolNameMap,
  signatures?: ExecutionSignatures,
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
            ...replayedReasoning(message, signatures),
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
  signatures: ThoughtSignatureCache;
}): Backend {
  return {
    name: "langchain",
    retriesTransientErrors: true,
    async *generate(request: GenerateRequest, ctx: BackendContext): AsyncIterable<Chunk> {
      const { llm_config: config } = request;
      if (!config.model) throw new ConfigError("llm_config.model is required");
      const model = await modelFor(config, options);
      const names = createToolNameMap(request.tools.map((t) => t.name));
      const replay =
        wireFamily(config) === "anthropic"
          ? options.signatures.get(request.execution_id)
          : undefined;
      const call: ProviderCallOptions = {
        prompt: toProviderPrompt(request.messages, names, replay),
        abortSignal: ctx.signal,
        providerOptions: thinkingOptions(config),
        ...(request.tools.length > 0
          ? {
              tools: request.tools.map((tool) => ({
                type: "function" as const,
                name: names.toProvider(tool.name),
                description: tool.description,
                inputSchema: parseParametersSchema(tool),
              })),
            }
          : {}),
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
        ...(config.max_tokens !== undefined ? { maxOutputTokens: config.max_tokens } : {}),
      };
      const { stream } = await model.doStream(call);
      let produced = false;
      const reasoning = new Map<string, ReasoningBlock>();
      const callIds: string[] = [];
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
              text: "",
              ...(typeof redacted === "string" ? { redactedData: redacted } : {}),
            });
            break;
          }
          case "reasoning-delta": {
            const block = reasoning.get(part.id);
            const signature = part.providerMetadata?.anthropic?.signature;
            if (block) {
              block.text += part.delta;
              if (typeof signature === "string") block.signature = signature;
            }
            if (part.delta) {
              produced = true;
              yield { thinking: { content: part.delta } };
            }
            break;
          }
          case "tool-call":
            produced = true;
            callIds.push(part.toolCallId);
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
            const signed = [...reasoning.values()].filter((b) => b.signature || b.redactedData);
            const [firstCall] = callIds;
            if (firstCall) {
              options.signatures.rememberReasoning(request.execution_id, firstCall, signed);
            }
            const input = part.usage.inputTokens.total ?? 0;
            const output = part.usage.outputTokens.total ?? 0;
            yield {
              usage: {
                input_tokens: input,
                output_tokens: output,
                total_tokens: input + output,
                thinking_tokens: part.usage.outputTokens.reasoning ?? 0,
              },
            };
            break;
          }
          default:
            break;
        }
      }
    },
  };
}

/** LanguageModelV3StreamPart, as the provider model declares it. */
type StreamPart =
  Awaited<ReturnType<ProviderModel["doStream"]>>["stream"] extends ReadableStream<infer P>
    ? P
    : never;
