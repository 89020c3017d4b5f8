import { getSessionRunbook, listMessages, listSessionTimeline } from "@tarsy/db";
import { forceExecutionStatus } from "@tarsy/db/testing";
import { createRunbookClient } from "@tarsy/runbooks";
import { type FakeGithub, startFakeGithub } from "@tarsy/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { runExecution } from "../src/execution.ts";
import { StandInGateway } from "./stand-in-gateway.ts";
import { createEnv, type Env, runnerDeps, seedExecution, startLlm } from "./support.ts";

/**
 * The session's runbook as agents see it: fetched once from the session's URL (a loopback
 * GitHub), stored on the session and reused by every execution; on a failed fetch the default
 * runbook with a timeline note.
 */

let env: Env;
let gh: FakeGithub;
let stops: (() => Promise<void> | void)[] = [];
const tools = new StandInGateway({});

beforeAll(async () => {
  gh = await startFakeGithub();
});
afterAll(async () => {
  await gh?.close();
});
beforeEach(async () => {
  env = await createEnv();
  stops = [];
});
afterEach(async () => {
  for (const stop of stops.reverse()) await stop();
  await env.cleanup();
});

/** A fresh client each time, so no cache hides a second fetch. */
const freshClient = () =>
  createRunbookClient({
    allowedDomains: ["127.0.0.1"],
    allowPrivateAddresses: true,
    cacheTtlMs: 60_000,
    githubApiUrl: gh.url,
  });

async function llm(answers: number) {
  const started = await startLlm(Array.from({ length: answers }, () => ({ text: "Done." })));
  stops.push(started.stop);
  return started.client;
}

async function userPrompt(executionId: string): Promise<string> {
  const messages = await listMessages(env.db.prisma, executionId);
  return messages.find((m) => m.role === "user")?.content ?? "";
}

const between = (text: string) =>
  /<!-- RUNBOOK START -->\n<untrusted_data source="runbook">\n([\s\S]*?)\n<\/untrusted_data>\n<!-- RUNBOOK END -->/.exec(
    text,
  )?.[1];

describe("the session's runbook", () => {
  test("is fetched once and every execution of the session, even concurrent ones, uses that text", async () => {
    const key = "acme/runbooks/main/parallel.md";
    let served = 0;
    gh.files.set(key, "# Version 1");
    const request = await seedExecution(env, {
      agents: 2,
      stageName: "parallel",
      runbookUrl: `${gh.url}/acme/runbooks/blob/main/parallel.md`,
    });
    const client = await llm(3);
    // Each execution has a client of its own (as on separate runners) and the file changes
    // after every request, so a second fetch would show a different text.
    const changing = {
      async fetch(url: string, signal?: AbortSignal) {
        const text = await freshClient().fetch(url, signal);
        served++;
        gh.files.set(key, `# Version ${served + 1}`);
        return text;
      },
    };
    await Promise.all(
      request.executions.map((id, i) =>
        runExecution(
          runnerDeps(env, client, tools, { runbooks: changing }),
          { ...request, execution_id: id, agent_index: i + 1 },
          new AbortController().signal,
        ),
      ),
    );
    const texts = await Promise.all(
      request.executions.map(async (id) => between(await userPrompt(id))),
    );
    expect(
      texts.every((t) => t !== undefined),
      JSON.stringify(texts),
    ).toBe(true);
    expect(new Set(texts).size, JSON.stringify(texts)).toBe(1);
    expect(texts[0]).toMatch(/^# Version \d$/);
    const runbook = await getSessionRunbook(env.db.prisma, request.session_id);
    expect(runbook?.source).toBe("fetched");
    expect(runbook?.content).toBe(texts[0]);

    // A later execution of the session (a redelivery, the next stage) does not fetch again.
    const before = gh.hits("/acme/runbooks/blob/main/parallel.md");
    await forceExecutionStatus(env.db.prisma, request.execution_id, "active");
    await runExecution(
      runnerDeps(env, await llm(1), tools, { runbooks: changing }),
      request,
      new AbortController().signal,
    );
    expect(gh.hits("/acme/runbooks/blob/main/parallel.md")).toBe(before);
    expect(between(await userPrompt(request.execution_id))).toBe(texts[0]);
  });

  test("a fetch failure falls back to defaults.runbook and says why on the timeline", async () => {
    const url = `${gh.url}/acme/runbooks/blob/main/missing.md`;
    const request = await seedExecution(env, { runbookUrl: url });
    const finished = await runExecution(
      runnerDeps(env, await llm(1), tools, { runbooks: freshClient() }),
      request,
      new AbortController().signal,
    );
    expect(finished.status).toBe("completed");
    expect(between(await userPrompt(request.execution_id))).toBe("RUNBOOK: check the pods first.");
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    const note = timeline.find((e) => e.eventType === "error");
    expect(note?.content).toBe(
      `Runbook ${url} could not be fetched (GET ${url} answered 404); the default runbook (defaults.runbook) is used instead.`,
    );
    expect(note?.metadata).toMatchObject({ kind: "runbook_fallback", runbook_source: "default" });
    expect(note?.executionId).toBe(request.execution_id);
    const runbook = await getSessionRunbook(env.db.prisma, request.session_id);
    expect(runbook?.source).toBe("default");
    expect(runbook?.error).toMatch(/answered 404/);
  });

  test("a URL outside the allowlist (config changed since submit) falls back as well", async () => {
    const request = await seedExecution(env, {
      runbookUrl: "https://git.internal.example/runbooks/x.md",
    });
    await runExecution(
      runnerDeps(env, await llm(1), tools, { runbooks: freshClient() }),
      request,
      new AbortController().signal,
    );
    expect(between(await userPrompt(request.execution_id))).toBe("RUNBOOK: check the pods first.");
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.find((e) => e.eventType === "error")?.content).toMatch(
      /not an allowed runbook domain/,
    );
  });

  test("without a URL the default runbook is used, with no note", async () => {
    const request = await seedExecution(env);
    await runExecution(
      runnerDeps(env, await llm(1), tools, { runbooks: freshClient() }),
      request,
      new AbortController().signal,
    );
    expect(between(await userPrompt(request.execution_id))).toBe("RUNBOOK: check the pods first.");
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => e.eventType)).toEqual(["final_analysis"]);
  });

  test("secrets in a fetched runbook are masked before any prompt sees them", async () => {
    gh.files.set(
      "acme/runbooks/main/secret.md",
      "Log in with\npassword: Sup3rS3cretValue!\nthen check the pods.",
    );
    const request = await seedExecution(env, {
      runbookUrl: `${gh.url}/acme/runbooks/blob/main/secret.md`,
    });
    await runExecution(
      runnerDeps(env, await llm(1), tools, { runbooks: freshClient() }),
      request,
      new AbortController().signal,
    );
    const text = between(await userPrompt(request.execution_id)) ?? "";
    expect(text).toContain("then check the pods.");
    expect(text).not.toContain("Sup3rS3cretValue!");
    const stored = await getSessionRunbook(env.db.prisma, request.session_id);
    expect(stored?.content).toBeTypeOf("string");
    expect(stored?.content).not.toContain("Sup3rS3cretValue!");
  });
});
