export { loadEnv } from "./env.ts";
export { sessionUrl, startedMessage, terminalMessage, truncateForSlack } from "./messages.ts";
export {
  type Notifier,
  type NotifierOptions,
  type NotifierResources,
  notificationEventOf,
  startNotifier,
} from "./notifier.ts";
export { normalizeText } from "./slack.ts";
export { signWebhook } from "./webhook.ts";
