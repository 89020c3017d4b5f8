export type { Script, ScriptEntry } from "./backends/script.ts";
export { parseScript, ScriptFormatError } from "./backends/script.ts";
export type { SecretLookup } from "./backends/types.ts";
export {
  createLlmServer,
  LLM_SERVICE_NAME,
  type LlmServer,
  type LlmServerOptions,
} from "./server.ts";
