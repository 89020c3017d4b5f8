import { randomUUID } from "node:crypto";
import {
  type Content,
  type GenerateContentConfig,
  type GenerateContentResponse,
  GoogleGenAI,
  type Part,
  type ThinkingConfig,
  ThinkingLevel,
  type Tool,
} from "@google/genai";
import { ConfigError, ContentBlockedError, EmptyResponseError } from "../errors.ts";
import {
  type Chunk,
  type ConversationMessage,
  type GenerateRequest,
  type LlmConfig,
  parseArguments,
  parseParametersSchema,
} from "../request.ts";
import { createToolNameMap, type ToolNameMap } from "../tool-names.ts";
import { resolveApiKey } from "./credentials.ts";
import { geminiThinkingLevel, reasoningEffort } from "./reasoning-effort.ts";
import type { Backend, BackendContext, SecretLookup } from "./types.ts";
import type { VertexCredentialStore } from "./vertex-auth.ts";
import { resolveVertexTarget, vertexPublisherFor } from "./vertex-models.ts";

export interface GoogleNativeOptions {
  getSecret: SecretLookup;
  vertexCredentials: VertexCredentialStore;
}

/** Finish/block reasons that mean the safety filters stopped the answer. */
const BLOCKING_REASONS = new Set<string>([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "OTHER",
]);

/** Thinking configuration by model unless the request sets a budget or level. */
export function thinkingConfigFor(config: LlmConfig): ThinkingConfig {
  const effort = reasoningEffort(config);
  const level = (
    config.thinking_level || (effort ? geminiThinkingLevel(effort) : "")
  ).toUpperCase();
  if (level) {
    if (!(level in ThinkingLevel)) {
      throw new ConfigError(
        `thinking_level "${config.thinking_level}" is not one of minimal, low, medium, high`,
      );
    }
    return { includeThoughts: true, thinkingLevel: level as ThinkingLevel };
  }
  if (config.thinking_budget !== undefined) {
    return { includeThoughts: true, thinkingBudget: config.thinking_budget };
  }
  const model = config.model.toLowerCase();
  if (model.includes("gemini-3"))
    return { includeThoughts: true, thinkingLevel: ThinkingLevel.HIGH };
  if (model.includes("2.5-pro")) return { includeThoughts: true, thinkingBudget: 32_768 };
  return { includeThoughts: true, thinkingBudget: 24_576 };
}

function nativeTools(config: LlmConfig): Tool[] {
  const tools: Tool[] = [];
  if (config.native_tools.google_search) tools.push({ googleSearch: {} });
  if (config.native_tools.code_execution) tools.push({ codeExecution: {} });
  if (config.native_tools.url_context) tools.push({ urlContext: {} });
  return tools;
}

/**
 * Converts the conversation to Gemini contents. The thought signatures the model produced
 * travel with the conversation: each goes back on the part it came with (Gemini requires
 * the signature on its functionCall part).
 */
export function toGeminiContents(
  messages: ConversationMessage[],
  names: ToolNameMap,
): { systemInstruction: string | undefined; contents: Content[] } {
  const system: string[] = [];
  const contents: Content[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        system.push(message.content);
        break;
      case "user":
        contents.push({ role: "user", parts: [{ text: message.content }] });
        break;
      case "assistant": {
        const parts: Part[] = [];
        if (message.content || message.thought_signature) {
          parts.push({
            text: message.content,
            ...(message.thought_signature ? { thoughtSignature: message.thought_signature } : {}),
          });
        }
        for (const call of message.tool_calls) {
          parts.push({
            functionCall: {
              name: names.toProvider(call.name),
              args: parseArguments(call.arguments),
            },
            ...(call.thought_signature ? { thoughtSignature: call.thought_signature } : {}),
          });
        }
        if (parts.length > 0) contents.push({ role: "model", parts });
        break;
      }
      case "tool": {
        const part: Part = {
          functionResponse: {
            name: names.toProvider(message.tool_name),
            response: { result: message.content },
          },
        };
        const previous = contents.at(-1);
        // Consecutive tool results answer one model turn: Gemini wants them in one content.
        if (previous?.role === "user" && previous.parts?.every((p) => p.functionResponse)) {
          previous.parts.push(part);
        } else {
          contents.push({ role: "user", parts: [part] });
        }
        break;
      }
      default: {
        const unreachable: never = message.role;
        throw new ConfigError(`unknown role ${String(unreachable)}`);
      }
    }
  }
  return { systemInstruction: system.length > 0 ? system.join("\n\n") : undefined, contents };
}

/** Gemini through @google/genai: native thinking, thought signatures, native tools. */
export function createGoogleNativeBackend(options: GoogleNativeOptions): Backend {
  const clients = new Map<string, GoogleGenAI>();

  const cached = (cacheKey: string, build: () => GoogleGenAI): GoogleGenAI => {
    const found = clients.get(cacheKey);
    if (found) return found;
    const client = build();
    clients.set(cacheKey, client);
    return client;
  };

  const clientFor = async (config: LlmConfig): Promise<GoogleGenAI> => {
    const httpOptions = config.base_url ? { baseUrl: config.base_url } : undefined;
    if (config.provider !== "vertexai" || config.api_key_env) {
      // The Gemini API, or Vertex AI express mode: an API key.
      const { apiKey, apiKeyEnv } = resolveApiKey(config, options.getSecret);
      const vertex = config.provider === "vertexai";
      if (vertex && vertexPublisherFor(config.model) === "anthropic") {
        throw new ConfigError(
          `the google-native backend speaks Gemini only: Claude model ${config.model} on Vertex AI needs the langchain backend`,
        );
      }
      const key = [config.provider, config.base_url, apiKeyEnv, apiKey].join("\u0000");
      return cached(key, () =>
        vertex
          ? new GoogleGenAI({ vertexai: true, apiKey, ...(httpOptions ? { httpOptions } : {}) })
          : new GoogleGenAI({ apiKey, ...(httpOptions ? { httpOptions } : {}) }),
      );
    }
    // Vertex AI with Google credentials: the same project, location and credentials as langchain.
    const credentials = options.vertexCredentials.forConfig(config);
    const target = await resolveVertexTarget(config, options.getSecret, credentials);
    if (target.publisher === "anthropic") {
      throw new ConfigError(
        `the google-native backend speaks Gemini only: Claude model ${config.model} on Vertex AI needs the langchain backend`,
      );
    }
    const key = [config.base_url, target.project, target.location, credentials.source].join(
      "\u0000",
    );
    return cached(
      key,
      () =>
        new GoogleGenAI({
          vertexai: true,
          project: target.project,
          location: target.location,
          ...(credentials.authClient
            ? { googleAuthOptions: { authClient: credentials.authClient } }
            : {}),
          httpOptions: { apiVersion: "v1", ...httpOptions },
        }),
    );
  };

  return {
    name: "google-native",
    retriesTransientErrors: true,
    async *generate(request: GenerateRequest, ctx: BackendContext): AsyncIterable<Chunk> {
      const { llm_config: config } = request;
      if (!config.model)
        throw new ConfigError("llm_config.model is required for the google-native backend");
      const client = await clientFor(config);
      const names = createToolNameMap(request.tools.map((t) => t.name));
      const { systemInstruction, contents } = toGeminiContents(request.messages, names);
      const tools: Tool[] = [];
      if (request.tools.length > 0) {
        if (Object.values(config.native_tools).some(Boolean)) {
          ctx.logger.warn(
            "MCP tools are bound: native tools suppressed (Gemini cannot combine them)",
          );
        }
        tools.push({
          functionDeclarations: request.tools.map((tool) => ({
            name: names.toProvider(tool.name),
            description: tool.description,
            parametersJsonSchema: parseParametersSchema(tool),
          })),
        });
      } else {
        tools.push(...nativeTools(config));
      }
      const generationConfig: GenerateContentConfig = {
        abortSignal: ctx.signal,
        thinkingConfig: thinkingConfigFor(config),
        ...(systemInstruction ? { systemInstruction } : {}),
        ...(tools.length > 0 ? { tools } : {}),
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
        ...(config.max_tokens !== undefined ? { maxOutputTokens: config.max_tokens } : {}),
      };
      const stream = await client.models.generateContentStream({
        model: config.model,
        contents,
        config: generationConfig,
      });
      let produced = false;
      let blocked: string | undefined;
      let usage: GenerateContentResponse["usageMetadata"];
      for await (const response of stream) {
        if (response.usageMetadata) usage = response.usageMetadata;
        const candidate = response.candidates?.[0];
        const reason = response.promptFeedback?.blockReason ?? candidate?.finishReason;
        if (reason && BLOCKING_REASONS.has(reason)) blocked = reason;
        for (const part of candidate?.content?.parts ?? []) {
          const chunk = partToChunk(part, names);
          if (chunk) {
            // A bare signature (empty text part) is not an answer by itself.
            if (!("text" in chunk) || chunk.text.content) produced = true;
            yield chunk;
          }
        }
        const grounding = candidate?.groundingMetadata;
        const urls = candidate?.urlContextMetadata?.urlMetadata ?? [];
        if (grounding || urls.length > 0) {
          yield {
            grounding: {
              web_search_queries: grounding?.webSearchQueries ?? [],
              sources: (grounding?.groundingChunks ?? []).flatMap((c) =>
                c.web?.uri ? [{ uri: c.web.uri, title: c.web.title ?? "" }] : [],
              ),
              url_context_urls: urls.flatMap((u) => (u.retrievedUrl ? [u.retrievedUrl] : [])),
            },
          };
        }
      }
      if (!produced && blocked) {
        throw new ContentBlockedError(
          `provider ${config.provider || "google"} blocked the request or answer (${blocked}): rephrase the prompt or review the alert data`,
        );
      }
      if (!produced)
        throw new EmptyResponseError(
          `provider ${config.provider || "google"} returned an empty response`,
        );
      if (usage) {
        yield {
          usage: {
            // promptTokenCount includes the implicitly cached part: input is what is left.
            input_tokens: Math.max(
              0,
              (usage.promptTokenCount ?? 0) - (usage.cachedContentTokenCount ?? 0),
            ),
            output_tokens: usage.candidatesTokenCount ?? 0,
            total_tokens: usage.totalTokenCount ?? 0,
            thinking_tokens: usage.thoughtsTokenCount ?? 0,
            cache_read_tokens: usage.cachedContentTokenCount ?? 0,
            cache_creation_tokens: 0,
          },
        };
      }
    },
  };
}

/**
 * One response part as a chunk. Thought signatures stay on the chunk of the part that
 * carried them (tool call or text; a signature may come on an empty text part), so the
 * runner stores them with the message and sends them back.
 */
function partToChunk(part: Part, names: ToolNameMap): Chunk | undefined {
  const signature = part.thoughtSignature ? { thought_signature: part.thoughtSignature } : {};
  if (part.functionCall) {
    return {
      tool_call: {
        call_id: part.functionCall.id || `call_${randomUUID()}`,
        name: names.toCanonical(part.functionCall.name ?? ""),
        arguments: JSON.stringify(part.functionCall.args ?? {}),
        ...signature,
      },
    };
  }
  if (part.executableCode)
    return { code_execution: { code: part.executableCode.code ?? "", result: "" } };
  if (part.codeExecutionResult) {
    return { code_execution: { code: "", result: part.codeExecutionResult.output ?? "" } };
  }
  if (part.thought) return part.text ? { thinking: { content: part.text } } : undefined;
  if (part.text || part.thoughtSignature)
    return { text: { content: part.text ?? "", ...signature } };
  return undefined;
}
