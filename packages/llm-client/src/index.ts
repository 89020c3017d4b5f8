export {
  createLlmClient,
  DEFAULT_CHANNEL_OPTIONS,
  type GenerateOptions,
  type HealthStatus,
  type LlmClient,
  type LlmClientOptions,
} from "./client.ts";
export {
  type ContinuityCollector,
  continuityFor,
  createContinuityCollector,
} from "./continuity.ts";
export {
  type EmbeddingConfig,
  EmbeddingConfigSchema,
  type EmbedInput,
  EmbedInputSchema,
  type EmbedOptions,
  type EmbedOutput,
  type EmbedTask,
  EmbedTaskSchema,
} from "./embed.ts";
export {
  LlmCancelledError,
  LlmClientError,
  type LlmClientErrorCode,
  LlmDeadlineExceededError,
  LlmInvalidArgumentError,
  LlmInvalidResponseError,
  LlmRpcError,
  LlmStreamIncompleteError,
  LlmUnavailableError,
} from "./errors.ts";
export {
  type ConversationMessage,
  ConversationMessageSchema,
  type GenerateInput,
  GenerateInputSchema,
  type LlmBackend,
  type LlmChunk,
  type LlmChunkType,
  type LlmConfig,
  LlmConfigSchema,
  type ReasoningBlock,
  ReasoningBlockSchema,
  type ReasoningContinuity,
  ReasoningContinuitySchema,
  type ToolCall,
  type ToolDefinition,
  ToolDefinitionSchema,
} from "./types.ts";
