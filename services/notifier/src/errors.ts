/** Why a send did not happen, and whether trying again can help. */
export class NotifyError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "NotifyError";
  }
}

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
