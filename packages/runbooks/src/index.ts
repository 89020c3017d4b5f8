export { refusedAddressReason } from "./address.ts";
export { TtlCache } from "./cache.ts";
export { createRunbookClient, type RunbookClient, type RunbookClientOptions } from "./client.ts";
export { RunbookError, type RunbookErrorCode } from "./errors.ts";
export {
  type RunbookSettings,
  type RunbookSettingsInput,
  RunbookSettingsSchema,
  runbookSettingsFromConfig,
} from "./settings.ts";
export {
  hostAllowed,
  parseRepoUrl,
  type RepoLocation,
  runbookUrlProblem,
  toRawContentUrl,
} from "./url.ts";
