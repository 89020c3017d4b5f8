import { jetstreamManager } from "@nats-io/jetstream";
import { CONSUMERS, STREAMS } from "@tarsy/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { connectBus, createBusAdmin } from "../src/index.ts";
import { type Harness, harness } from "./support.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe("provision", () => {
  it("creates every stream and consumer with the catalog's settings, and a second run changes nothing", async () => {
    h = await harness({ consumers: { runner: { ackWaitMs: 7_000, maxDeliver: 4 } } }, false);
    const first = await h.admin.provision();
    expect(Object.values(first.streams)).toEqual(["created", "created", "created"]);
    expect(Object.values(first.consumers)).toEqual(["created", "created", "created"]);

    const second = await h.admin.provision();
    expect(Object.values(second.streams)).toEqual(["unchanged", "unchanged", "unchanged"]);
    expect(Object.values(second.consumers)).toEqual(["unchanged", "unchanged", "unchanged"]);

    const jsm = await jetstreamManager(h.raw);
    const work = await jsm.streams.info(`TARSY_WORK${h.streamSuffix}`);
    expect(work.config.subjects).toEqual([`${h.prefix}.${STREAMS.work.subjects[0]}`]);
    expect(work.config.retention).toBe("workqueue");
    expect(work.config.storage).toBe("file");
    expect(work.config.duplicate_window).toBe(120_000_000_000);
    const events = await jsm.streams.info(`TARSY_EVENTS${h.streamSuffix}`);
    expect(events.config.retention).toBe("limits");
    expect(events.config.max_age).toBe(7 * 24 * 3600 * 1e9);

    const runner = await jsm.consumers.info(`TARSY_WORK${h.streamSuffix}`, "agent-runner");
    expect(runner.config.filter_subject).toBe(`${h.prefix}.${CONSUMERS.runner.filterSubject}`);
    expect(runner.config.ack_policy).toBe("explicit");
    expect(runner.config.ack_wait).toBe(7_000_000_000);
    // one spare delivery so a message whose last attempt died still reaches the dead letters
    expect(runner.config.max_deliver).toBe(5);
    // The notifier reads the sessions channel of the events stream from its creation on.
    const notifier = await jsm.consumers.info(`TARSY_EVENTS${h.streamSuffix}`, "notifier");
    expect(notifier.config.filter_subject).toBe(`${h.prefix}.${CONSUMERS.notifier.filterSubject}`);
    expect(notifier.config.deliver_policy).toBe("new");
    // It retries a failing handler longer than the work consumers (one spare delivery on top).
    expect(notifier.config.max_deliver).toBe(21);
  });

  it("gives the events stream the configured max age (event_ttl_ms), and a new one at the next start", async () => {
    const day = 24 * 3600_000;
    h = await harness({ streamMaxAgeMs: { events: 3 * day } }, false);
    expect(Object.values((await h.admin.provision()).streams)).toEqual([
      "created",
      "created",
      "created",
    ]);
    const jsm = await jetstreamManager(h.raw);
    const maxAge = async () =>
      (await jsm.streams.info(`TARSY_EVENTS${h!.streamSuffix}`)).config.max_age;
    expect(await maxAge()).toBe(3 * day * 1e6);

    // A new event_ttl_ms updates the stream at the next start.
    const changed = createBusAdmin(await h.another({ streamMaxAgeMs: { events: 1 * day } }));
    const report = await changed.provision();
    expect(report.streams[`TARSY_EVENTS${h.streamSuffix}`]).toBe("updated");
    expect(await maxAge()).toBe(1 * day * 1e6);
  });

  it("is harmless when five replicas provision at once", async () => {
    h = await harness({}, false);
    const replicas = await Promise.all(Array.from({ length: 5 }, () => h!.another()));
    const reports = await Promise.all(replicas.map((bus) => createBusAdmin(bus).provision()));

    // Each stream was created by some replica; the others found it (or raced and converged).
    for (const name of Object.keys(reports[0]!.streams)) {
      expect(
        reports.some((r) => r.streams[name] === "created"),
        name,
      ).toBe(true);
    }
    const jsm = await jetstreamManager(h.raw);
    const names = [];
    for await (const s of jsm.streams.list()) names.push(s.config.name);
    for (const name of ["TARSY_WORK", "TARSY_EVENTS", "TARSY_DLQ"]) {
      expect(names.filter((n) => n === `${name}${h!.streamSuffix}`)).toHaveLength(1);
    }
    const again = await h.admin.provision();
    expect(Object.values(again.consumers)).toEqual(["unchanged", "unchanged", "unchanged"]);
  });

  it("updates a consumer whose settings drifted, keeping its pending work", async () => {
    h = await harness({ consumers: { runner: { ackWaitMs: 5_000 } } });
    const changed = await connectBus({
      ...h.settings,
      consumers: { runner: { ackWaitMs: 9_000 } },
    });
    try {
      const report = await createBusAdmin(changed).provision();
      expect(report.consumers[`TARSY_WORK${h.streamSuffix}/agent-runner`]).toBe("updated");
      expect(report.consumers[`TARSY_WORK${h.streamSuffix}/orchestrator`]).toBe("unchanged");
      const jsm = await jetstreamManager(h.raw);
      const info = await jsm.consumers.info(`TARSY_WORK${h.streamSuffix}`, "agent-runner");
      expect(info.config.ack_wait).toBe(9_000_000_000);
    } finally {
      await changed.close();
    }
  });

  it("puts a stream whose settings drifted back to the catalog's, keeping its messages", async () => {
    h = await harness();
    await h.bus.publish("sessionStatus", {
      v: 1,
      type: "session.status",
      session_id: "s",
      status: "pending",
      timestamp: new Date().toISOString(),
    });
    const jsm = await jetstreamManager(h.raw);
    const name = `TARSY_EVENTS${h.streamSuffix}`;
    const before = await jsm.streams.info(name);
    await jsm.streams.update(name, {
      ...before.config,
      max_age: 3600 * 1e9,
      duplicate_window: 1e9,
    });

    const report = await h.admin.provision();
    expect(report.streams[name]).toBe("updated");
    expect(report.streams[`TARSY_WORK${h.streamSuffix}`]).toBe("unchanged");
    const after = await jsm.streams.info(name);
    expect(after.config.max_age).toBe(7 * 24 * 3600 * 1e9);
    expect(after.config.duplicate_window).toBe(120e9);
    expect(after.state.messages).toBe(2);
  });

  it("reports a stream whose subjects another stream already holds, after looking again", async () => {
    h = await harness({}, false);
    const jsm = await jetstreamManager(h.raw);
    const squatter = `SQUATTER${h.streamSuffix}`;
    await jsm.streams.add({
      name: squatter,
      subjects: [`${h.prefix}.${STREAMS.work.subjects[0]}`],
    });
    try {
      const failure = await h.admin.provision().catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toContain(`TARSY_WORK${h.streamSuffix}`);
      expect(String((failure as Error & { cause?: unknown }).cause)).toContain("overlap");
    } finally {
      await jsm.streams.delete(squatter);
    }
  });
});
