export type { Script, ScriptEntry } from "./backends/script.ts";
export { parseScript, ScriptFormatError } from "./backends/script.ts";
export {
  SCRIPTED_DEFAULT_DIMENSIONS,
  scriptedEmbedding,
  scriptedTokens,
} from "./backends/scripted-embedder.ts";
export type { SecretLookup } from "./backends/types.ts";
export {
  createLlmServer,
  LLM_SERVICE_NAME,
  type LlmServer,
  type LlmServerOptions,
} from "./server.ts";
