export { serviceBundle } from "./bundle.ts";
export { ensureNats, ensurePostgres, freePort, isListening, type ManagedInfra } from "./infra.ts";
export {
  formatLine,
  type LogSink,
  type RunningProcess,
  type ServiceSpec,
  startProcess,
} from "./processes.ts";
export { type ServiceName, type Stack, type StackOptions, startStack } from "./stack.ts";
