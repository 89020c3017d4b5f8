/** Every error the bus raises; `code` tells them apart (switch over it, exhaustively). */
export type BusErrorCode =
  | "bus_invalid_options"
  | "bus_invalid_payload"
  | "bus_not_connected"
  | "bus_publish_failed"
  | "bus_provision_failed"
  | "bus_not_found";

export abstract class BusError extends Error {
  abstract readonly code: BusErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class BusInvalidOptionsError extends BusError {
  readonly code = "bus_invalid_options" as const;
}

/** A payload failed its catalog schema; nothing was published. */
export class BusInvalidPayloadError extends BusError {
  readonly code = "bus_invalid_payload" as const;
  constructor(
    readonly messageKey: string,
    readonly issues: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(`invalid ${messageKey} payload: ${issues.join("; ")}`, options);
  }
}

export class BusNotConnectedError extends BusError {
  readonly code = "bus_not_connected" as const;
}

export class BusPublishError extends BusError {
  readonly code = "bus_publish_failed" as const;
  constructor(
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super(`publish to ${subject} failed: ${describeError(options?.cause)}`, options);
  }
}

export class BusProvisionError extends BusError {
  readonly code = "bus_provision_failed" as const;
  constructor(
    readonly resource: string,
    options?: { cause?: unknown },
  ) {
    super(`provisioning ${resource} failed: ${describeError(options?.cause)}`, options);
  }
}

export class BusNotFoundError extends BusError {
  readonly code = "bus_not_found" as const;
}

/** One line describing any thrown value (for dead letters and logs). */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}
