import { type Bus, connectBus, createBusAdmin, type PersistentMessage } from "@tarsy/bus";
import { sessionEventsSubject } from "@tarsy/contracts";
import { createCostEstimator } from "@tarsy/cost";
import { type PrivateNats, startPrivateNats } from "@tarsy/testkit";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { createPostgresStore } from "../src/store.ts";
import { type EventBus, Timeline } from "../src/timeline.ts";
import { logger, seedExecution, runnerTest as test } from "./support.ts";

/**
 * A persistent timeline event must reach the events stream even when NATS goes away at the
 * very moment it is published: the runner keeps retrying until the server is back.
 */
describe("a persistent timeline event published while NATS drops", () => {
  let nats: PrivateNats;
  let bus: Bus;

  beforeEach(async () => {
    nats = await startPrivateNats();
    bus = await connectBus({ servers: nats.url, name: "timeline-outage", logger, prefix: "tout" });
    await createBusAdmin(bus).provision();
  }, 30_000);

  afterEach(async () => {
    await bus?.close();
    await nats?.cleanup();
  });

  test("reaches the stream once NATS is back, exactly once", async ({ env }) => {
    const request = await seedExecution(env);
    const publishes: string[] = [];
    let restarted: Promise<void> | undefined;
    // The real bus, except that the first publish of the final analysis kills NATS first
    // and brings it back 1.5 s later.
    const dropping: EventBus = {
      publishTransient: (key, payload) => bus.publishTransient(key, payload),
      async publishMessage(message: PersistentMessage) {
        publishes.push(message.key);
        const final =
          message.key === "timelineEventCompleted" &&
          message.payload.event_type === "final_analysis";
        if (final && !restarted) {
          await nats.kill();
          restarted = new Promise((resolve) => setTimeout(resolve, 1_500)).then(() => nats.start());
        }
        return bus.publishMessage(message);
      },
    };
    const timeline = new Timeline(
      createPostgresStore(env.db, createCostEstimator(env.config.system.cost_estimation)),
      dropping,
      logger,
      {
        sessionId: request.session_id,
        stageId: request.stage_id,
        executionId: request.execution_id,
      },
    );

    const event = await timeline.create("final_analysis");
    timeline.delta(event, "The pod ran out of memory.");
    await timeline.complete(event);
    expect(restarted).toBeDefined();
    await restarted;

    // Retried until stored, and stored once: the stream dropped any repeat by its message id.
    expect(publishes.filter((k) => k === "timelineEventCompleted").length).toBeGreaterThan(1);
    const replay = await bus.replayEvents({
      subject: sessionEventsSubject(request.session_id),
      afterSeq: 0,
      limit: 100,
    });
    const eventId = event.record.id;
    expect(replay.events.map((e) => e.payload)).toEqual([
      expect.objectContaining({
        type: "timeline_event.created",
        event_id: eventId,
        event_type: "final_analysis",
      }),
      expect.objectContaining({
        type: "timeline_event.completed",
        event_id: eventId,
        event_type: "final_analysis",
        status: "completed",
        content: "The pod ran out of memory.",
      }),
    ]);
  }, 60_000);
});
