export {
  type CreateTestDatabaseOptions,
  createTestDatabase,
  createTestDb,
  DEFAULT_DATABASE_URL,
  databaseUrl,
  migrationsHash,
  type TestDatabase,
  type TestDb,
  withDatabase,
} from "./db.ts";
export { type FakeGithub, startFakeGithub } from "./fake-github.ts";
export {
  type FakeSlack,
  type FakeSlackMessage,
  type FakeSlackPost,
  startFakeSlack,
} from "./fake-slack.ts";
export { startWebhookReceiver, type WebhookReceiver } from "./fake-webhook.ts";
export { dbTest, natsTest } from "./fixtures.ts";
export {
  type CreateTestBusOptions,
  connectRawNats,
  createTestBus,
  natsUrl,
  type RawNatsConnection,
  type TestBus,
  workStored,
} from "./nats.ts";
export { type PrivateNats, startPrivateNats } from "./private-nats.ts";
export {
  callerTag,
  type FakeSts,
  type RecordedRequest,
  type RecordingMcpServer,
  type StsRequest,
  startFakeSts,
  startRecordingMcpServer,
} from "./recording-mcp.ts";
export { isAlive, type NotYet, type UntilOptions, until } from "./until.ts";
export { connectClient, type TestClient, waitForEvents } from "./ws.ts";
