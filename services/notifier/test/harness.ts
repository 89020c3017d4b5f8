import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { loadConfig, type TarsyConfig } from "@tarsy/config";
import { ACTIVE_SESSION_STATUSES, type SessionStatus } from "@tarsy/contracts";
import {
  type AlertSession,
  createSession,
  type Db,
  listSessionDeliveries,
  type NotificationDelivery,
  transitionSessionStatus,
} from "@tarsy/db";
import { createLogger } from "@tarsy/runtime";
import {
  createTestDb,
  type FakeSlack,
  natsTest,
  startFakeSlack,
  startWebhookReceiver,
  type TestBus,
  type TestDb,
} from "@tarsy/testkit";
import { expect } from "vitest";
import { type Notifier, type NotifierOptions, startNotifier } from "../src/notifier.ts";

export const logger = createLogger({
  service: "test",
  level: process.env.TEST_LOG_LEVEL ?? "silent",
});

export const CHANNEL = "C0TARSY01";
export const DASHBOARD = "https://tarsy.example.com";
export const WEBHOOK_SECRET = "whsec-test-secret";

export interface ConfigParts {
  slack?: FakeSlack;
  /** The bot token given to the notifier (default: the one the fake accepts). */
  slackToken?: string;
  webhooks?: { url: string; events?: string[]; signed?: boolean }[];
}

/** tarsy.yaml with Slack pointed at the fake and the webhooks given; returns dir and env. */
export function writeNotifierConfig(parts: ConfigParts): {
  dir: string;
  env: Record<string, string>;
} {
  const dir = mkdtempSync(join(tmpdir(), "tarsy-notifier-"));
  const lines = ["system:", `  dashboard_url: ${DASHBOARD}`];
  if (parts.slack) {
    lines.push(
      "  slack:",
      "    enabled: true",
      `    channel: ${CHANNEL}`,
      `    api_url: ${parts.slack.url}`,
    );
  }
  if (parts.webhooks?.length) {
    lines.push("  notifications:", "    webhooks:");
    for (const hook of parts.webhooks) {
      lines.push(`      - url: ${hook.url}`);
      if (hook.events) lines.push(`        events: [${hook.events.join(", ")}]`);
      if (hook.signed !== false) lines.push("        secret_env: TARSY_WEBHOOK_SECRET");
    }
  }
  writeFileSync(join(dir, "tarsy.yaml"), `${lines.join("\n")}\n`);
  writeFileSync(join(dir, "llm-providers.yaml"), "llm_providers: {}\n");
  const env: Record<string, string> = { TARSY_WEBHOOK_SECRET: WEBHOOK_SECRET };
  if (parts.slack) env.SLACK_BOT_TOKEN = parts.slackToken ?? parts.slack.token;
  return { dir, env };
}

export function notifierConfig(parts: ConfigParts): {
  config: TarsyConfig;
  env: Record<string, string>;
} {
  const { dir, env } = writeNotifierConfig(parts);
  const { config } = loadConfig({ configDir: dir, env });
  return { config, env };
}

export const FAST: Omit<NotifierOptions, "podId"> = {
  concurrency: 4,
  leaseMs: 10_000,
  maxAttempts: 4,
  retryInitialMs: 100,
  retryMaxMs: 400,
  sweepIntervalMs: 100,
  requestTimeoutMs: 3_000,
  consume: { backoff: { initialMs: 50, maxMs: 500 }, fetchExpiresMs: 1_000 },
};

export function startTestNotifier(
  t: TestDb,
  nats: TestBus,
  parts: ConfigParts,
  options: Partial<NotifierOptions> = {},
  bus = nats.bus,
): Promise<Notifier> {
  const { config, env } = notifierConfig(parts);
  return startNotifier(
    { db: t.db.prisma, bus, config, env, logger },
    { podId: "notifier-a", ...FAST, ...options },
  );
}

export async function newSession(db: Db, fingerprint?: string): Promise<AlertSession> {
  const { session } = await createSession(db.prisma, {
    project: "default",
    alertData: '{"alert":"PodCrashLooping"}',
    alertType: "kubernetes",
    chainId: "kubernetes-agent-chain",
    slackMessageFingerprint: fingerprint ?? null,
  });
  return session;
}

/** Moves the session as the orchestrator would and publishes its status event; returns the seq. */
export async function reach(
  db: Db,
  bus: TestBus["bus"],
  session: AlertSession,
  status: SessionStatus,
  set: {
    executiveSummary?: string;
    finalAnalysis?: string;
    errorMessage?: string;
    cancelledBy?: string;
    cancelReason?: string;
    /** The executive summary's labels (as the orchestrator stores them). */
    labels?: string[];
  } = {},
): Promise<number> {
  const from: readonly SessionStatus[] =
    status === "in_progress" ? ["pending"] : ACTIVE_SESSION_STATUSES;
  const ok = await transitionSessionStatus(db.prisma, session.id, from, status, {
    ...set,
    ...(status === "in_progress" ? { startedAt: new Date() } : { completedAt: new Date() }),
  });
  expect(ok).toBe(true);
  const [published] = await bus.publish("sessionStatus", {
    v: 1,
    type: "session.status",
    session_id: session.id,
    status,
    alert_type: session.alertType,
    chain_id: session.chainId,
    error: set.errorMessage ?? null,
    timestamp: new Date().toISOString(),
  });
  return (published?.seq ?? 0) as number;
}

/** Resolves once the notifier's consumer has acknowledged every event up to `seq`. */
export async function handled(nats: TestBus, seq: number): Promise<void> {
  const jsm = await jetstreamManager(await nats.raw());
  const stream = nats.bus.streamName("events");
  const deadline = Date.now() + 20_000;
  for (;;) {
    const info = await jsm.consumers.info(stream, "notifier");
    if (info.ack_floor.stream_seq >= seq) return;
    if (Date.now() > deadline)
      throw new Error(`event ${seq} not handled (ack floor ${info.ack_floor.stream_seq})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits until a delivery of the session for target/event satisfies `done` (of several, as an
 * event's deliveries for different action requests, the first that does).
 */
export async function deliveryOf(
  db: Db,
  sessionId: string,
  target: string,
  event: string,
  done: (d: NotificationDelivery) => boolean = (d) => d.status !== "sending",
): Promise<NotificationDelivery> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const candidates = (await listSessionDeliveries(db.prisma, sessionId)).filter(
      (d) => d.target === target && d.event === event,
    );
    const found = candidates.find(done);
    if (found) return found;
    if (Date.now() > deadline) {
      throw new Error(`delivery ${target}/${event} not done: ${JSON.stringify(candidates)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The text of each section of a Slack message. */
export const blockTexts = (blocks: unknown[] | undefined) =>
  (blocks ?? []).flatMap((b) => {
    const block = b as {
      text?: { text?: string };
      elements?: { url?: string; text?: { text?: string } }[];
    };
    return block.text?.text ? [block.text.text] : [];
  });

/** A Slack message's first button. */
export const buttonOf = (blocks: unknown[] | undefined) =>
  (blocks ?? [])
    .flatMap(
      (b) => (b as { elements?: { url?: string; text?: { text?: string } }[] }).elements ?? [],
    )
    .at(0);

export const postsFor = (slack: FakeSlack, sessionId: string, event?: string) =>
  slack.posts.filter(
    (p) =>
      p.metadata?.event_payload.session_id === sessionId &&
      (event === undefined || p.metadata.event_payload.event === event),
  );

/** A test with its own database, bus, fake Slack and webhook receiver. */
export const notifierTest = natsTest
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads fixture dependencies from this pattern
  .extend("t", async ({}, { onCleanup }) => {
    const t = await createTestDb();
    onCleanup(() => t.cleanup());
    return t;
  })
  // biome-ignore lint/correctness/noEmptyPattern: as above
  .extend("slack", async ({}, { onCleanup }) => {
    const slack = await startFakeSlack();
    onCleanup(() => slack.close());
    return slack;
  })
  // biome-ignore lint/correctness/noEmptyPattern: as above
  .extend("hook", async ({}, { onCleanup }) => {
    const hook = await startWebhookReceiver();
    onCleanup(() => hook.close());
    return hook;
  })
  .extend("notifiers", async ({ t: _t, nats: _nats }, { onCleanup }) => {
    const notifiers: Notifier[] = [];
    onCleanup(async () => {
      for (const n of notifiers.splice(0)) await n.stop();
    });
    return notifiers;
  });
