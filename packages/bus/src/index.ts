export { type BusAdmin, createBusAdmin } from "./admin.ts";
export {
  type CommittedPublisher,
  type OutboxPublisherOptions,
  outboxPublisher,
  publishWithRetry,
  type RetryPublishOptions,
} from "./after-commit.ts";
export { type Bus, type BusHealth, connectBus } from "./bus.ts";
export {
  type BackoffOptions,
  backoffDelay,
  type ConsumeContext,
  type ConsumedMessage,
  type ConsumeOptions,
  type ConsumerHandlers,
  DEFAULT_BACKOFF,
  type MessageHandler,
  type StopReport,
  type WorkConsumer,
} from "./consume.ts";
export type { DeadLetterPage, DeadLetterRecord } from "./dead-letters.ts";
export {
  BusError,
  type BusErrorCode,
  BusInvalidOptionsError,
  BusInvalidPayloadError,
  BusNotConnectedError,
  BusNotFoundError,
  BusProvisionError,
  BusPublishError,
} from "./errors.ts";
export type { EventFeed, EventReadOptions, EventRecord, EventReplay } from "./events.ts";
export { busOptionsFromEnv, type NatsEnv, NatsEnvShape, provisionOnStart } from "./from-env.ts";
export type { BusObserver, PublishedMessage } from "./observer.ts";
export {
  type BusAuth,
  type BusOptions,
  type BusTlsOptions,
  type ConsumerSettings,
  DEFAULT_CONSUMER_SETTINGS,
  DEFAULT_PREFIX,
} from "./options.ts";
export type { ProvisionReport } from "./provision.ts";
export type { PersistentMessage, PublishResult } from "./publish.ts";
export type { ReadStart } from "./reader.ts";
export {
  RPC_REPLY_HEADROOM_BYTES,
  type RpcContext,
  RpcError,
  type RpcErrorCode,
  RpcHandlerError,
  RpcInvalidReplyError,
  RpcInvalidRequestError,
  RpcNoRespondersError,
  RpcRemoteError,
  RpcRequestFailedError,
  type RpcRequestOptions,
  type RpcRoute,
  type RpcService,
  type RpcServiceOptions,
  RpcTimeoutError,
  requestRpc,
  rpcRoute,
  serveRpc,
} from "./rpc.ts";
export type { TransientHandler, TransientSubscription } from "./transient.ts";
