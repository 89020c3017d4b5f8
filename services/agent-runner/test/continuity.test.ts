import { listLLMInteractions, listMessages, listSessionTimeline } from "@tarsy/db";
import type { GenerateInput, LlmClient } from "@tarsy/llm-client";
import { describe, expect } from "vitest";
import { runExecution } from "../src/execution.ts";
import { record, runnerDeps, seedExecution, runnerTest as test, waitFor } from "./support.ts";

/** The real client, keeping a copy of every request the runner sends through it. */
function recordingClient(client: LlmClient): {
  llm: Pick<LlmClient, "generate">;
  requests: GenerateInput[];
} {
  const requests: GenerateInput[] = [];
  return {
    requests,
    llm: {
      generate(input, options) {
        requests.push(structuredClone(input));
        return client.generate(input, options);
      },
    },
  };
}

const SIGNED = { thinking: "Let me check the pod.", signature: "c2lnbmVkLWJsb2NrLTE=" };
const REDACTED = { redacted_data: "cmVkYWN0ZWQtYmxvY2s=" };
const CALL_SIGNATURE = "dGhvdWdodC1zaWctY2FsbC0y";

describe("reasoning continuity in the runner", () => {
  test("stored with the assistant message, sent back on every later call, never shown", async ({
    env,
    stops,
    llm,
    echo,
  }) => {
    const started = await llm([
      {
        thinking: "Let me check the pod.",
        reasoning: [SIGNED, REDACTED],
        text: "Checking the pod.",
        tool_calls: [{ id: "call-1", name: "everything.echo", arguments: { message: "hello" } }],
      },
      {
        text: "Still looking.",
        tool_calls: [
          {
            id: "call-2",
            name: "everything.echo",
            arguments: { message: "again" },
            thought_signature: CALL_SIGNATURE,
          },
        ],
      },
      { text: "Root cause: the pod ran out of memory." },
    ]);
    const { llm: recording, requests } = recordingClient(started.client);
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);

    const finished = await runExecution(
      runnerDeps(env, started.client, echo, { llm: recording }),
      request,
      new AbortController().signal,
    );
    expect(finished.status).toBe("completed");

    // Each carries the provider whose model produced it (only that one is sent it back).
    const turn1 = {
      blocks: [
        { thinking: SIGNED.thinking, signature: SIGNED.signature },
        { thinking: "", redactedData: REDACTED.redacted_data },
      ],
      producer: "scripted-llm",
    };
    const turn2 = { toolCallSignatures: { "call-2": CALL_SIGNATURE }, producer: "scripted-llm" };

    // Every later request carries each earlier assistant turn's data, unchanged.
    const assistants = (i: number) =>
      requests[i]?.messages.filter((m) => m.role === "assistant").map((m) => m.continuity);
    expect(requests).toHaveLength(3);
    expect(assistants(0)).toEqual([]);
    expect(assistants(1)).toEqual([turn1]);
    expect(assistants(2)).toEqual([turn1, turn2]);

    // The Message rows hold it, so the conversation can be rebuilt with it.
    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages.map((m) => [m.role, m.continuity])).toEqual([
      ["system", null],
      ["user", null],
      ["assistant", turn1],
      ["tool", null],
      ["assistant", turn2],
      ["tool", null],
      ["assistant", null],
    ]);
    // Tool calls stay as the user sees them: no signature inside.
    expect(messages[4]?.toolCalls).toEqual([
      { id: "call-2", name: "everything.echo", arguments: '{"message":"again"}' },
    ]);

    // Never shown or put in a prompt: not in the timeline, the published events and chunks,
    // the recorded interactions, nor in any message's text.
    await waitFor("the final analysis event to be published", () =>
      rec.events.some(
        (e) =>
          e.type === "timeline_event.completed" &&
          "event_type" in e &&
          e.event_type === "final_analysis",
      )
        ? true
        : undefined,
    );
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    const interactions = await listLLMInteractions(env.db.prisma, {
      executionId: request.execution_id,
    });
    expect(interactions).toHaveLength(3);
    const visible = JSON.stringify([
      timeline,
      rec.events,
      rec.chunks,
      interactions,
      messages.map((m) => [m.content, m.toolCalls]),
      requests.map((r) => r.messages.map((m) => [m.content, m.toolCalls])),
    ]);
    for (const secret of [SIGNED.signature, REDACTED.redacted_data, CALL_SIGNATURE]) {
      expect(visible).not.toContain(secret);
    }
  });
});
