import { type Service, type ServiceMsg, Svcm } from "@nats-io/services";
import { errors } from "@nats-io/transport-node";
import type { RpcMethodDef } from "@tarsy/contracts";
import type { z } from "zod";
import type { Bus } from "./bus.ts";
import { coreOf } from "./core.ts";

/**
 * Request/reply over NATS services (`@nats-io/services`): discoverable with `$SRV.PING|INFO|STATS`,
 * every body JSON validated by the method's zod schemas on both sides. Errors cross the wire as
 * service errors (headers `Nats-Service-Error[-Code]`) with a JSON body `{ error: { code, message } }`.
 */

export type RpcErrorCode =
  | "rpc_no_responders"
  | "rpc_timeout"
  | "rpc_remote_error"
  | "rpc_invalid_request"
  | "rpc_invalid_reply"
  | "rpc_request_failed";

export abstract class RpcError extends Error {
  abstract readonly code: RpcErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Nobody listens on the subject (e.g. the replica that held an execution is gone). */
export class RpcNoRespondersError extends RpcError {
  readonly code = "rpc_no_responders" as const;
  constructor(readonly subject: string) {
    super(`no service answers on ${subject}`);
  }
}

export class RpcTimeoutError extends RpcError {
  readonly code = "rpc_timeout" as const;
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply on ${subject} within ${timeoutMs} ms`);
  }
}

/** The service answered with an error. `remoteCode` is the service's own string code. */
export class RpcRemoteError extends RpcError {
  readonly code = "rpc_remote_error" as const;
  constructor(
    readonly subject: string,
    readonly status: number,
    readonly remoteCode: string,
    message: string,
  ) {
    super(`${subject}: ${message}`);
  }
}

export class RpcInvalidRequestError extends RpcError {
  readonly code = "rpc_invalid_request" as const;
}

export class RpcInvalidReplyError extends RpcError {
  readonly code = "rpc_invalid_reply" as const;
}

export class RpcRequestFailedError extends RpcError {
  readonly code = "rpc_request_failed" as const;
}

/** Thrown by a handler to answer with a specific status and string code. */
export class RpcHandlerError extends Error {
  readonly code = "rpc_handler_error" as const;
  constructor(
    readonly status: number,
    readonly remoteCode: string,
    message: string,
  ) {
    super(message);
    this.name = "RpcHandlerError";
  }
}

export interface RpcContext {
  /** Absolute subject the request arrived on. */
  readonly subject: string;
  /** The server's max payload in bytes: a reply must encode below it. */
  readonly maxPayload: number;
}

export interface RpcRoute<D extends RpcMethodDef = RpcMethodDef> {
  readonly def: D;
  /** Relative subject prefix; the endpoint listens on `<bus prefix>.<subjectPrefix>.<method>`. */
  readonly subjectPrefix: string;
  /** Queue group; "" for none. */
  readonly queue: string;
  readonly handler: (
    request: z.output<D["request"]>,
    ctx: RpcContext,
  ) => Promise<z.input<D["reply"]>>;
}

/** Builds a route with the handler typed by the method definition. */
export function rpcRoute<D extends RpcMethodDef>(route: RpcRoute<D>): RpcRoute {
  return route as unknown as RpcRoute;
}

export interface RpcServiceOptions {
  name: string;
  version: string;
  description?: string;
  metadata?: Record<string, string>;
}

export interface RpcService {
  /** The NATS service instance id (as `$SRV.INFO` reports it). */
  readonly id: string;
  readonly maxPayload: number;
  /** Requests being handled now. */
  inFlight(): number;
  /** Stops taking requests, then waits (bounded) for those in flight. */
  stop(graceMs?: number): Promise<void>;
}

/** Bytes NATS adds around a reply body for the error headers; replies keep this much room. */
export const RPC_REPLY_HEADROOM_BYTES = 1_024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function errorBody(code: string, message: string): Uint8Array {
  return encoder.encode(JSON.stringify({ error: { code, message } }));
}

function respondError(msg: ServiceMsg, status: number, code: string, message: string): void {
  // The description header must stay one line.
  msg.respondError(
    status,
    message.replace(/[\r\n]+/g, " ").slice(0, 512),
    errorBody(code, message),
  );
}

function issuesOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
}

/** Starts a discoverable NATS service answering the given routes. */
export async function serveRpc(
  bus: Bus,
  options: RpcServiceOptions,
  routes: readonly RpcRoute[],
): Promise<RpcService> {
  const nc = coreOf(bus).connection;
  const maxPayload = nc.info?.max_payload ?? 1_048_576;
  const service: Service = await new Svcm(
    // @nats-io/services bundles an older nats-core whose connection type differs only nominally.
    nc as unknown as ConstructorParameters<typeof Svcm>[0],
  ).add({
    name: options.name,
    version: options.version,
    description: options.description ?? "",
    metadata: options.metadata ?? {},
  });
  const logger = bus.logger.child({ component: "rpc", service: options.name });
  let inFlight = 0;
  const idle: Array<() => void> = [];

  const handle = async (route: RpcRoute, msg: ServiceMsg): Promise<void> => {
    let body: unknown;
    try {
      body = msg.data.length === 0 ? {} : JSON.parse(decoder.decode(msg.data));
    } catch {
      respondError(msg, 400, "bad_request", "request body is not JSON");
      return;
    }
    const parsed = route.def.request.safeParse(body);
    if (!parsed.success) {
      respondError(msg, 400, "bad_request", `invalid request: ${issuesOf(parsed.error)}`);
      return;
    }
    try {
      const reply = await route.handler(parsed.data, { subject: msg.subject, maxPayload });
      const checked = route.def.reply.safeParse(reply);
      if (!checked.success) {
        logger.error({ subject: msg.subject, issues: issuesOf(checked.error) }, "invalid reply");
        respondError(msg, 500, "internal", "the service built an invalid reply");
        return;
      }
      const data = encoder.encode(JSON.stringify(checked.data));
      if (data.length > maxPayload - RPC_REPLY_HEADROOM_BYTES) {
        respondError(
          msg,
          500,
          "reply_too_large",
          `reply of ${data.length} bytes exceeds the limit`,
        );
        return;
      }
      msg.respond(data);
    } catch (err) {
      if (err instanceof RpcHandlerError) {
        respondError(msg, err.status, err.remoteCode, err.message);
        return;
      }
      logger.error({ err, subject: msg.subject }, "rpc handler failed");
      respondError(msg, 500, "internal", err instanceof Error ? err.message : String(err));
    }
  };

  for (const route of routes) {
    const subject = bus.subject(`${route.subjectPrefix}.${route.def.method}`);
    service.addEndpoint(`${route.subjectPrefix}.${route.def.method}`.replace(/\./g, "_"), {
      subject,
      queue: route.queue,
      handler: (err, msg) => {
        if (err) {
          logger.error({ err, subject }, "rpc endpoint failed");
          return;
        }
        inFlight += 1;
        handle(route, msg).finally(() => {
          inFlight -= 1;
          if (inFlight === 0) for (const wake of idle.splice(0)) wake();
        });
      },
    });
  }

  return {
    id: service.info().id,
    maxPayload,
    inFlight: () => inFlight,
    async stop(graceMs = 30_000) {
      await service.stop();
      if (inFlight === 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        idle.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

export interface RpcRequestOptions {
  timeoutMs: number;
}

/** Sends one validated request to `<bus prefix>.<subjectPrefix>.<method>` and validates the reply. */
export async function requestRpc<D extends RpcMethodDef>(
  bus: Bus,
  def: D,
  subjectPrefix: string,
  payload: z.input<D["request"]>,
  options: RpcRequestOptions,
): Promise<z.output<D["reply"]>> {
  const subject = bus.subject(`${subjectPrefix}.${def.method}`);
  const request = def.request.safeParse(payload);
  if (!request.success) {
    throw new RpcInvalidRequestError(`invalid request for ${subject}: ${issuesOf(request.error)}`);
  }
  const nc = coreOf(bus).connection;
  let reply: Awaited<ReturnType<typeof nc.request>>;
  try {
    reply = await nc.request(subject, encoder.encode(JSON.stringify(request.data)), {
      timeout: options.timeoutMs,
    });
  } catch (err) {
    if (err instanceof errors.RequestError && err.isNoResponders()) {
      throw new RpcNoRespondersError(subject);
    }
    if (err instanceof errors.NoRespondersError) throw new RpcNoRespondersError(subject);
    if (err instanceof errors.TimeoutError) throw new RpcTimeoutError(subject, options.timeoutMs);
    throw new RpcRequestFailedError(`request to ${subject} failed`, { cause: err });
  }
  const errorHeader = reply.headers?.get("Nats-Service-Error");
  const errorCode = reply.headers?.get("Nats-Service-Error-Code");
  if (errorHeader || errorCode) {
    let remoteCode = "internal";
    let message = errorHeader ?? "service error";
    try {
      const body = JSON.parse(decoder.decode(reply.data)) as {
        error?: { code?: unknown; message?: unknown };
      };
      if (typeof body.error?.code === "string") remoteCode = body.error.code;
      if (typeof body.error?.message === "string") message = body.error.message;
    } catch {
      // keep the header's description
    }
    throw new RpcRemoteError(subject, Number(errorCode) || 500, remoteCode, message);
  }
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(reply.data));
  } catch (err) {
    throw new RpcInvalidReplyError(`reply on ${subject} is not JSON`, { cause: err });
  }
  const parsed = def.reply.safeParse(body);
  if (!parsed.success) {
    throw new RpcInvalidReplyError(`invalid reply on ${subject}: ${issuesOf(parsed.error)}`);
  }
  return parsed.data as z.output<D["reply"]>;
}
