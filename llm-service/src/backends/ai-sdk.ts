import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  type JSONValue,
  jsonSchema,
  type LanguageModel,
  type ModelMessage,
  streamText,
  type Tool,
} from "ai";
import { ConfigError, ContentBlockedError, EmptyResponseError } from "../errors.ts";
import {
  type Chunk,
  type ConversationMessage,
  type GenerateRequest,
  type LlmConfig,
  parseArguments,
  parseParametersSchema,
} from "../request.ts";
import type {
  ExecutionSignatures,
  ReasoningBlock,
  ThoughtSignatureCache,
} from "../thought-signatures.ts";
import { createToolNameMap, type ToolNameMap } from "../tool-names.ts";
import { resolveApiKey } from "./credentials.ts";
import type { Backend, BackendContext, SecretLookup } from "./types.ts";

/** xAI speaks the OpenAI chat-completions protocol; reached through openai-compatible. */
const XAI_BASE_URL = "https://api.x.ai/v1";
/** Vertex AI express mode (API key) for Gemini models, through @ai-sdk/google. */
const VERTEX_EXPRESS_BASE_URL = "https://aiplatform.googleapis.com/v1/publishers/google";

type ProviderOptions = Record<string, Record<string, JSONValue>>;

/** Builds the AI SDK model for a provider type. API keys are always passed explicitly. */
export function modelFor(config: LlmConfig, getSecret: SecretLookup): LanguageModel {
  const baseURL = config.base_url || undefined;
  switch (config.provider) {
    case "openai": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createOpenAI({ apiKey, ...(baseURL ? { baseURL } : {}) }).chat(config.model);
    }
    case "anthropic": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createAnthropic({ apiKey, ...(baseURL ? { baseURL } : {}) })(config.model);
    }
    case "google": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createGoogleGenerativeAI({ apiKey, ...(baseURL ? { baseURL } : {}) })(config.model);
    }
    case "vertexai": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createGoogleGenerativeAI({ apiKey, baseURL: baseURL ?? VERTEX_EXPRESS_BASE_URL })(
        config.model,
      );
    }
    case "xai": {
      const { apiKey } = resolveApiKey(config, getSecret);
      return createOpenAICompatible({
        name: "xai",
        apiKey,
        baseURL: baseURL ?? XAI_BASE_URL,
        includeUsage: true,
      }).chatModel(config.model);
    }
    case "openai-compatible":
    case "ollama":
    case "vllm":
    case "litellm": {
      if (!baseURL)
        throw new ConfigError(
          `provider ${config.provider} needs llm_config.base_url (e.g. http://localhost:11434/v1)`,
        );
      const { apiKey } = resolveApiKey(config, getSecret, true);
      return createOpenAICompatible({
        name: config.provider,
        baseURL,
        includeUsage: true,
        ...(apiKey ? { apiKey } : {}),
      }).chatModel(config.model);
    }
    default:
      throw new ConfigError(
        `unknown provider type "${config.provider}" for the langchain backend: use openai, anthropic, google, vertexai, xai or openai-compatible`,
      );
  }
}

function thinkingOptions(config: LlmConfig): ProviderOptions {
  const budget = config.thinking_budget;
  const level = config.thinking_level.toLowerCase();
  switch (config.provider) {
    case "anthropic":
      return budget !== undefined && budget > 0
        ? { anthropic: { thinking: { type: "enabled", budgetTokens: budget } } }
        : {};
    case "google":
    case "vertexai": {
      if (budget === undefined && !level) return {};
      const thinkingConfig: Record<string, JSONValue> = { includeThoughts: true };
      if (level) thinkingConfig.thinkingLevel = level;
      else if (budget !== undefined) thinkingConfig.thinkingBudget = budget;
      return { google: { thinkingConfig } };
    }
    case "openai":
      return level ? { openai: { reasoningEffort: level } } : {};
    default:
      return {};
  }
}

/** Anthropic thinking blocks to replay before the tool calls of an earlier turn. */
function replayedReasoning(
  message: ConversationMessage,
  signatures: ExecutionSignatures | undefined,
) {
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

export function toModelMessages(
  messages: ConversationMessage[],
  names: ToolNameMap,
  signatures?: ExecutionSignatures,
): { system: string | undefined; messages: ModelMessage[] } {
  const system: string[] = [];
  const out: ModelMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        system.push(message.content);
        break;
      case "user":
        out.push({ role: "user", content: message.content });
        break;
      case "assistant":
        out.push({
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
        });
        break;
      case "tool":
        out.push({
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: message.tool_call_id,
              toolName: names.toProvider(message.tool_name),
              output: { type: "text", value: message.content },
            },
          ],
        });
        break;
      default: {
        const unreachable: never = message.role;
        throw new ConfigError(`unknown role ${String(unreachable)}`);
      }
    }
  }
  return { system: system.length > 0 ? system.join("\n\n") : undefined, messages: out };
}

/**
 * The multi-provider backend (config name "langchain", as in TARSy) on the Vercel AI SDK:
 * OpenAI, Anthropic (extended thinking), Google, Vertex AI, xAI and OpenAI-compatible
 * endpoints, streaming text, reasoning and tool calls. The SDK's own retries are off:
 * the server's retry loop owns them.
 */
export function createAiSdkBackend(options: {
  getSecret: SecretLookup;
  signatures: ThoughtSignatureCache;
}): Backend {
  return {
    name: "langchain",
    retriesTransientErrors: true,
    async *generate(request: GenerateRequest, ctx: BackendContext): AsyncIterable<Chunk> {
      const { llm_config: config } = request;
      if (!config.model) throw new ConfigError("llm_config.model is required");
      const model = modelFor(config, options.getSecret);
      const names = createToolNameMap(request.tools.map((t) => t.name));
      const tools: Record<string, Tool> = {};
      for (const tool of request.tools) {
        tools[names.toProvider(tool.name)] = {
          description: tool.description,
          inputSchema: jsonSchema(parseParametersSchema(tool)),
        };
      }
      const replay =
        config.provider === "anthropic" ? options.signatures.get(request.execution_id) : undefined;
      const { system, messages } = toModelMessages(request.messages, names, replay);
      const result = streamText({
        model,
        messages,
        maxRetries: 0,
        abortSignal: ctx.signal,
        // Errors arrive as `error` parts below; the default handler would print the raw
        // request (the conversation) to stderr.
        onError: () => {},
        providerOptions: thinkingOptions(config),
        ...(system ? { system } : {}),
        ...(request.tools.length > 0 ? { tools } : {}),
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
        ...(config.max_tokens !== undefined ? { maxOutputTokens: config.max_tokens } : {}),
      });
      let produced = false;
      const reasoning = new Map<string, ReasoningBlock>();
      const callIds: string[] = [];
      for await (const part of result.fullStream) {
        switch (part.type) {
          case "reasoning-start": {
            const redacted = part.providerMetadata?.anthropic?.redactedData;
            reasoning.set(part.id, {
              text: "",
              ...(typeof redacted === "string" ? { redactedData: redacted } : {}),
            });
            break;
          }
          case "text-delta":
            if (part.text) {
              produced = true;
              yield { text: { content: part.text } };
            }
            break;
          case "reasoning-delta": {
            const block = reasoning.get(part.id);
            const signature = part.providerMetadata?.anthropic?.signature;
            if (block) {
              block.text += part.text;
              if (typeof signature === "string") block.signature = signature;
            }
            if (part.text) {
              produced = true;
              yield { thinking: { content: part.text } };
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
                arguments:
                  typeof part.input === "string" ? part.input : JSON.stringify(part.input ?? {}),
              },
            };
            break;
          case "error":
            throw part.error;
          case "abort":
            throw new DOMException("aborted", "AbortError");
          case "finish": {
            if (!produced && part.finishReason === "content-filter") {
              throw new ContentBlockedError(
                `provider ${config.provider} blocked the request or answer (content filter): rephrase the prompt or review the alert data`,
              );
            }
            if (!produced)
              throw new EmptyResponseError(
                `provider ${config.provider} returned an empty response`,
              );
            const signed = [...reasoning.values()].filter((b) => b.signature || b.redactedData);
            const [firstCall] = callIds;
            if (firstCall)
              options.signatures.rememberReasoning(request.execution_id, firstCall, signed);
            const usage = part.totalUsage;
            yield {
              usage: {
                input_tokens: usage.inputTokens ?? 0,
                output_tokens: usage.outputTokens ?? 0,
                total_tokens:
                  usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0),
                thinking_tokens: usage.outputTokenDetails?.reasoningTokens ?? 0,
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
