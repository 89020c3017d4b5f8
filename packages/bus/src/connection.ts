import { readFile } from "node:fs/promises";
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from "@nats-io/transport-node";
import type { Logger } from "@tarsy/runtime";
import type { BusOptions } from "./options.ts";

export type ConnectionState = "connected" | "disconnected" | "closed";

/** Opens a connection that reconnects forever and logs each state change once. */
export async function openConnection(
  options: BusOptions,
  logger: Logger,
  onState: (state: ConnectionState) => void,
): Promise<NatsConnection> {
  const opts: NodeConnectionOptions = {
    servers: options.servers,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    waitOnFirstConnect: options.waitOnFirstConnect ?? false,
  };
  const auth = options.auth ?? { kind: "none" };
  switch (auth.kind) {
    case "none":
      break;
    case "token":
      opts.token = auth.token;
      break;
    case "userPass":
      opts.user = auth.user;
      opts.pass = auth.pass;
      break;
    case "credentials": {
      const creds = await readFile(auth.file);
      opts.authenticator = credsAuthenticator(new Uint8Array(creds));
      break;
    }
    default:
      auth satisfies never;
  }
  if (options.tls) {
    opts.tls = {
      ...(options.tls.caFile ? { caFile: options.tls.caFile } : {}),
      ...(options.tls.certFile ? { certFile: options.tls.certFile } : {}),
      ...(options.tls.keyFile ? { keyFile: options.tls.keyFile } : {}),
    };
  }
  const nc = await connect(opts);
  logger.info({ server: nc.getServer() }, "nats connected");
  onState("connected");
  void watchStatus(nc, logger, onState);
  void nc.closed().then((err) => {
    onState("closed");
    if (err) logger.error({ err }, "nats connection closed with error");
    else logger.info("nats connection closed");
  });
  return nc;
}

async function watchStatus(
  nc: NatsConnection,
  logger: Logger,
  onState: (state: ConnectionState) => void,
): Promise<void> {
  let lastError = "";
  for await (const status of nc.status()) {
    switch (status.type) {
      case "disconnect":
        onState("disconnected");
        logger.warn({ server: status.server }, "nats disconnected; reconnecting");
        break;
      case "reconnect":
        onState("connected");
        lastError = "";
        logger.info({ server: status.server }, "nats reconnected");
        break;
      case "error": {
        // The client repeats an error on every failed attempt: log each distinct one once.
        const text = status.error.message;
        if (text !== lastError) logger.error({ err: status.error }, "nats error");
        lastError = text;
        break;
      }
      case "ldm":
        logger.warn({ server: status.server }, "nats server entering lame duck mode");
        break;
      case "slowConsumer":
        logger.warn({ pending: status.pending }, "nats slow consumer");
        break;
      default:
        break;
    }
  }
}
