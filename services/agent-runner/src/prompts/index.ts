export {
  buildComposeMessages,
  buildExecutiveSummaryMessages,
  buildFunctionCallingMessages,
  buildSynthesisMessages,
  composeChatInstructions,
  composeInstructions,
} from "./builder.ts";
export { INVESTIGATION_CONTEXT_END, INVESTIGATION_CONTEXT_START } from "./chat.ts";
export { CHAIN_CONTEXT_END, CHAIN_CONTEXT_START } from "./context.ts";
export { type LabelMapPrompt, labelsReminder } from "./executive-summary.ts";
export { forcedConclusionPrompt } from "./forced-conclusion.ts";
export {
  summarizationSystemPrompt,
  summarizationUserPrompt,
  summarizedResult,
  summaryNote,
} from "./summarization.ts";
