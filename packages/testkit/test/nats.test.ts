import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { SESSIONS_EVENTS_SUBJECT, WORK_SUBJECTS } from "@tarsy/contracts";
import { afterAll, describe, expect, it } from "vitest";
import { natsTest } from "../src/fixtures.ts";
import { createTestBus, natsUrl } from "../src/nats.ts";

const seen: { prefix: string; suffix: string }[] = [];

async function streamNames(): Promise<string[]> {
  const nc = await connect({ servers: natsUrl() });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const s of jsm.streams.list()) names.push(s.config.name);
    return names;
  } finally {
    await nc.close();
  }
}

describe("nats test fixture", () => {
  natsTest("gives a test its own prefix and provisioned streams", async ({ nats }) => {
    seen.push({ prefix: nats.prefix, suffix: nats.streamSuffix });
    expect(nats.prefix).toMatch(/^t[0-9a-f]{8}$/);
    const [stored] = await nats.bus.publish("sessionSubmitted", {
      v: 1,
      session_id: "s-1",
      alert_type: "kubernetes",
      chain_id: "k8s",
      submitted_at: new Date().toISOString(),
    });
    expect(stored).toMatchObject({
      subject: `${nats.prefix}.${WORK_SUBJECTS.sessionSubmitted}`,
      seq: 1,
    });
    expect(await streamNames()).toContain(`TARSY_WORK${nats.streamSuffix}`);
  });

  natsTest("gives the next test another prefix", async ({ nats }) => {
    seen.push({ prefix: nats.prefix, suffix: nats.streamSuffix });
    expect(seen[0]?.prefix).not.toBe(nats.prefix);
    expect(await nats.admin.lastSequence(SESSIONS_EVENTS_SUBJECT)).toBe(0);
  });

  it("cleans up the streams of a finished test", async () => {
    const names = await streamNames();
    for (const { suffix } of seen.slice(0, 2)) {
      expect(names.filter((n) => n.endsWith(suffix))).toEqual([]);
    }
  });

  it("createTestBus works without the fixture and cleans up after itself", async () => {
    const testBus = await createTestBus({ consumers: { runner: { maxDeliver: 2 } } });
    const other = await testBus.connectAnother();
    expect(other.prefix).toBe(testBus.prefix);
    expect(await streamNames()).toContain(`TARSY_EVENTS${testBus.streamSuffix}`);
    await testBus.cleanup();
    expect(other.isConnected()).toBe(false);
    expect((await streamNames()).filter((n) => n.endsWith(testBus.streamSuffix))).toEqual([]);
  });
});

afterAll(() => {
  expect(seen).toHaveLength(2);
});
