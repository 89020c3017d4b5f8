// Exposed for whole-system tests and benchmarks; services never import each other.
export { type Orchestrator, type OrchestratorOptions, startOrchestrator } from "./orchestrator.ts";
