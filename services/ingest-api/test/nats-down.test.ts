import { type Bus, connectBus, createBusAdmin } from "@tarsy/bus";
import type { PayloadOf } from "@tarsy/contracts";
import { countStoredRows, insertSessionRows } from "@tarsy/db/testing";
import { type PrivateNats, startPrivateNats } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ErrorBody,
  eventually,
  type Harness,
  request,
  startHarness,
  testLogger,
} from "./support.ts";

/** A nats-server of this test's own, so it can be killed and started again. */
let nats: PrivateNats;
let bus: Bus;
let h: Harness;
const submitted: PayloadOf<"sessionSubmitted">[] = [];

beforeAll(async () => {
  nats = await startPrivateNats();
  bus = await connectBus({
    servers: nats.url,
    name: "ingest-nats-down",
    logger: testLogger(),
    prefix: "tdown",
  });
  await createBusAdmin(bus).provision();
  await bus.consume("orchestrator", {
    sessionSubmitted: async (p) => void submitted.push(p),
    chatSubmitted: async () => {},
    cancelRequested: async () => {},
    deadline: async () => {},
    executionFinished: async () => {},
    scoreRequested: async () => {},
    feedbackSubmitted: async () => {},
  });
  h = await startHarness({ bus, gateway: false, settings: { publishTimeoutMs: 1_000 } });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await bus?.close();
  await nats?.cleanup();
});

describe("when NATS is down", () => {
  it("answers 503 and stores nothing; after NATS is back, alerts are accepted again", async () => {
    const ok = await request<{ session_id: string }>(`${h.url}/api/v1/alerts`, {
      body: { data: "before" },
    });
    expect(ok.status).toBe(202);
    await eventually(() => submitted.some((m) => m.session_id === ok.body.session_id));

    // A finished session to chat on, and one running to cancel, while NATS is down.
    const [doneId] = await insertSessionRows(h.db.prisma, {
      count: 1,
      alertData: "x",
      alertType: "kubernetes",
      chainId: "kubernetes-agent-chain",
      status: "completed",
    });
    await nats.kill();
    await eventually(() => !bus.isConnected(), 10_000);
    const { sessions: sessionsBefore, outbox: outboxBefore } = await countStoredRows(h.db.prisma);

    const down = await request<ErrorBody>(`${h.url}/api/v1/alerts`, { body: { data: "during" } });
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe("unavailable");
    expect(await countStoredRows(h.db.prisma)).toMatchObject({
      sessions: sessionsBefore,
      outbox: outboxBefore,
    });

    const chat = await request<ErrorBody>(`${h.url}/api/v1/sessions/${doneId}/chat/messages`, {
      body: { content: "why?" },
    });
    expect(chat.status).toBe(503);
    expect(await countStoredRows(h.db.prisma)).toMatchObject({
      chatUserMessages: 0,
      chats: 0,
      outbox: outboxBefore,
    });

    const am = await request<ErrorBody>(`${h.url}/api/v1/alerts/alertmanager`, {
      body: {
        status: "firing",
        groupKey: "g",
        alerts: [{ status: "firing", labels: { alertname: "X" }, fingerprint: "fffff" }],
      },
    });
    expect(am.status).toBe(503);
    expect((await countStoredRows(h.db.prisma)).sessions).toBe(sessionsBefore);

    await nats.start();
    await eventually(() => bus.isConnected(), 15_000);
    const after = await request<{ session_id: string }>(`${h.url}/api/v1/alerts`, {
      body: { data: "after" },
    });
    expect(after.status).toBe(202);
    await eventually(() => submitted.some((m) => m.session_id === after.body.session_id), 10_000);
    // Only the accepted sessions were ever announced.
    expect(submitted.map((m) => m.session_id).sort()).toEqual(
      [ok.body.session_id, after.body.session_id].sort(),
    );
  }, 60_000);
});
