/** The harness's own failures (cases that do not load are `CaseLoadError`, API answers `ApiError`). */

export type HarnessErrorCode =
  | "chain_conflict"
  | "llm_address_unknown"
  | "session_timeout"
  | "judge_failed";

export class HarnessError extends Error {
  constructor(
    readonly code: HarnessErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "HarnessError";
  }
}
