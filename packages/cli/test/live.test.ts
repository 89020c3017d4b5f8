import { mkdtempSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SESSIONS_EVENTS_SUBJECT, sessionEventsSubject, WORK_SUBJECTS } from "@tarsy/contracts";
import { connectRawNats } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ONCALL_LLM_SCRIPT, onCallTests } from "./oncall.ts";
import { bootSystem, DEMO_ALERT, type Run, type System, tarsy } from "./support.ts";

const SYNTHESIS_START = "## Root cause";
const SYNTHESIS_END = "Watch restarts: `kubectl -n payments get pods -w`.";
const CHAT_ANSWER =
  "The first failure was payments-api-7f9c6d5b8-x2kqz at 03:12:04Z (OutOfMemoryError, exit 137).";

interface SessionJson {
  session: {
    status: string;
    final_analysis: string | null;
    executive_summary: string | null;
    stages: { id: string; kind: string; status: string }[];
    chat: { messages: { content: string }[] } | null;
  };
  timeline: { events: { id: string; event_type: string; stage_id: string | null }[] };
}

interface EventLine {
  seq: number;
  subject: string;
  timestamp: string;
  event: { type: string; session_id: string; status?: string; event_id?: string };
}

const jsonLines = (text: string): EventLine[] =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as EventLine);

/** A TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise((r) => server.close(r));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

/**
 * The `tarsy` executable against the whole system booted as processes (demo config,
 * scripted LLM, real Postgres and NATS), run as a user at a terminal would run it.
 */
describe("tarsy against the running system", () => {
  let sys: System;
  let sessionId: string;
  let watched: Run;

  beforeAll(async () => {
    sys = await bootSystem({ extraLlmScript: ONCALL_LLM_SCRIPT });
  }, 240_000);
  afterAll(async () => {
    await sys?.stop();
  }, 60_000);

  it("alert submit prints the session id; session watch streams it live to the final analysis and exits 0", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "tarsy-cli-")), "alert.json");
    writeFileSync(file, JSON.stringify(DEMO_ALERT));
    const submitted = await tarsy(["alert", "submit", file], { env: sys.env });
    expect(submitted.stderr).toBe("");
    expect(submitted.code).toBe(0);
    sessionId = submitted.stdout.trim();
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{8,}$/);

    watched = await tarsy(["session", "watch", sessionId], { env: sys.env, timeoutMs: 150_000 });
    expect(watched.code).toBe(0);
    const out = watched.stdout;
    expect(out).toContain("▶ stage 1 triage: started");
    expect(out).toContain("▶ stage 2 deep-dive: completed");
    expect(out).toContain("[MASKED_SECRET_DATA]");
    expect(out).not.toContain("hunter2");
    // The synthesis streamed into one line, never repeated as a whole at completion.
    expect(out).toContain(`  FINAL ANALYSIS: ${SYNTHESIS_START}\n    The payments-api container`);
    expect(out).toContain(SYNTHESIS_END);
    expect(out.split(SYNTHESIS_START)).toHaveLength(2);
    // From stage 2 on the watch is surely attached (stage 1 is printed before it): nothing
    // streamed there is printed again whole. Stage 1 may have started streaming before the
    // watch process was up; its answer then comes whole, marked "(final)", as it should.
    const stage2 = out.indexOf("▶ stage 2 deep-dive: started");
    expect(stage2).toBeGreaterThan(0);
    expect(out.slice(stage2)).not.toContain("(final)");
    expect(out).toContain("EXECUTIVE SUMMARY: payments-api is crash-looping");
    expect(out.trimEnd().endsWith("● session completed")).toBe(true);
    // Streaming: the final analysis reached the terminal in several pieces over time,
    // its beginning well before its end.
    const arrival = (text: string) => {
      let sofar = "";
      for (const piece of watched.pieces) {
        sofar += piece.text;
        if (sofar.includes(text)) return piece.at;
      }
      return undefined;
    };
    const startAt = arrival(`FINAL ANALYSIS: ${SYNTHESIS_START}`);
    const endAt = arrival(SYNTHESIS_END);
    expect(startAt).toBeDefined();
    expect(endAt).toBeDefined();
    const between = watched.pieces.filter((p) => p.at >= (startAt ?? 0) && p.at <= (endAt ?? 0));
    expect(between.length).toBeGreaterThanOrEqual(3);
    expect((endAt ?? 0) - (startAt ?? 0)).toBeGreaterThanOrEqual(50);
  }, 200_000);

  it("session watch of a finished session replays its timeline and exits 0", async () => {
    const replay = await tarsy(["session", "watch", sessionId], { env: sys.env });
    expect(replay.code).toBe(0);
    // No chunks are stored: the streamed texts come from the completed events.
    expect(replay.stdout).toContain(`FINAL ANALYSIS:\n    ${SYNTHESIS_START}`);
    expect(replay.stdout).toContain(SYNTHESIS_END);
    expect(replay.stdout.trimEnd().endsWith("● session completed")).toBe(true);
  }, 60_000);

  it("session show prints status, stages, executions, analysis, summary and tokens; --json the raw answers", async () => {
    const json = await tarsy(["session", "show", sessionId, "--json"], { env: sys.env });
    expect(json.code).toBe(0);
    const raw = JSON.parse(json.stdout) as SessionJson;
    expect(raw.session.status).toBe("completed");
    expect(raw.timeline.events.length).toBeGreaterThan(5);

    const show = await tarsy(["session", "show", sessionId], { env: sys.env });
    expect(show.stderr).toBe("");
    expect(show.code).toBe(0);
    const out = show.stdout;
    expect(out).toContain(`Session ${sessionId}`);
    expect(out).toMatch(/ {2}Status: +completed\n/);
    expect(out).toMatch(/ {2}Alert type: +PodCrashLooping\n/);
    expect(out).toMatch(/ {2}Tokens: +[1-9]\d* tokens \(\d+ in, \d+ out/);
    expect(out).toContain("Stages (3):");
    expect(out).toMatch(/ {2}1\. triage \[investigation\] completed, \d+ timeline events/);
    expect(out).toMatch(/ {2}2\. deep-dive \[investigation, multi_agent policy \w+\] completed/);
    expect(out).toMatch(/ {5}- LogAgent \(investigation.*\) completed, \d+ tokens/);
    expect(out).toMatch(/ {5}- EventsAgent \(investigation.*\) completed/);
    expect(out).toContain(`Final analysis:\n  ${SYNTHESIS_START}`);
    expect(out).toContain(raw.session.executive_summary ?? "missing");
    expect(raw.session.final_analysis).toContain(SYNTHESIS_END);
  }, 60_000);

  it("events replay prints the session's events from NATS in sequence order; --from-seq, --limit and --since narrow it", async () => {
    const all = await tarsy(["events", "replay", "--session", sessionId], { env: sys.env });
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);
    const lines = jsonLines(all.stdout);
    expect(lines.length).toBeGreaterThan(10);
    const seqs = lines.map((l) => l.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(lines.every((l) => l.subject === sessionEventsSubject(sessionId))).toBe(true);
    expect(lines.every((l) => l.event.session_id === sessionId)).toBe(true);
    // The session completes, then enters review (announced in that order).
    expect(lines.slice(-2).map((l) => l.event)).toMatchObject([
      { type: "session.status", status: "completed" },
      { type: "review.status", review_status: "needs_review", actor: "system" },
    ]);
    // Every timeline event the API knows was published on the stream.
    const show = JSON.parse(
      (await tarsy(["session", "show", sessionId, "--json"], { env: sys.env })).stdout,
    ) as SessionJson;
    const published = new Set(lines.map((l) => l.event.event_id).filter(Boolean));
    for (const event of show.timeline.events) expect(published).toContain(event.id);

    const fifth = lines[4] as EventLine;
    const from = await tarsy(
      ["events", "replay", "-s", sessionId, "--from-seq", String(fifth.seq)],
      {
        env: sys.env,
      },
    );
    expect(from.code).toBe(0);
    expect(jsonLines(from.stdout)).toEqual(lines.slice(4));

    const limited = await tarsy(["events", "replay", "-s", sessionId, "--limit", "3"], {
      env: sys.env,
    });
    expect(jsonLines(limited.stdout)).toEqual(lines.slice(0, 3));

    const last = lines.at(-1) as EventLine;
    const since = await tarsy(["events", "replay", "-s", sessionId, "--since", last.timestamp], {
      env: sys.env,
    });
    const sinceLines = jsonLines(since.stdout);
    expect(sinceLines.at(-1)).toEqual(last);
    expect(sinceLines.every((l) => l.timestamp >= last.timestamp)).toBe(true);
    expect(sinceLines.length).toBeLessThan(lines.length);

    // --all-projects: the lifecycle of all sessions.
    const sessions = jsonLines(
      (await tarsy(["events", "replay", "--all-projects"], { env: sys.env })).stdout,
    );
    expect(
      sessions.some((l) => l.event.session_id === sessionId && l.event.status === "completed"),
    ).toBe(true);
    expect(sessions.every((l) => l.subject === SESSIONS_EVENTS_SUBJECT)).toBe(true);
  }, 90_000);

  it("chat asks a question and streams the answer until its stage completes; events replay --follow sees the turn live", async () => {
    const before = jsonLines(
      (await tarsy(["events", "replay", "-s", sessionId], { env: sys.env })).stdout,
    );
    const lastSeq = before.at(-1)?.seq ?? 0;
    // Follow the stream from the next event on; it ends after 3 new events.
    const following = tarsy(
      [
        "events",
        "replay",
        "-s",
        sessionId,
        "--from-seq",
        String(lastSeq + 1),
        "--follow",
        "--limit",
        "3",
      ],
      { env: sys.env, timeoutMs: 90_000 },
    );
    const chat = await tarsy(["chat", sessionId, "Which pod failed first?"], {
      env: sys.env,
      timeoutMs: 90_000,
    });
    expect(chat.stderr).toBe("");
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain("asks: Which pod failed first?");
    expect(chat.stdout).toContain(CHAT_ANSWER);
    expect(chat.stdout).toMatch(/▶ stage \d+ .*: completed\n$/);
    // Only the new turn: nothing of the investigation is printed again.
    expect(chat.stdout).not.toContain(SYNTHESIS_START);

    const followed = await following;
    expect(followed.code).toBe(0);
    const live = jsonLines(followed.stdout);
    expect(live.map((l) => l.seq)).toEqual(
      jsonLines((await tarsy(["events", "replay", "-s", sessionId], { env: sys.env })).stdout)
        .slice(before.length, before.length + 3)
        .map((l) => l.seq),
    );
    expect(live.length).toBe(3);
    expect(live[0]?.seq).toBeGreaterThan(lastSeq);

    const show = await tarsy(["session", "show", sessionId], { env: sys.env });
    expect(show.stdout).toContain("Chat (1 message):");
    expect(show.stdout).toMatch(/\[chat\] completed/);
  }, 120_000);

  it("alert submit reads text from stdin with --type and --runbook", async () => {
    const run = await tarsy(
      [
        "alert",
        "submit",
        "-",
        "--type",
        "PodCrashLooping",
        "--runbook",
        "https://github.com/acme/runbooks/blob/main/oom.md",
      ],
      { env: sys.env, stdin: "payments-api is crash looping in namespace payments\n" },
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const id = run.stdout.trim();
    const show = await tarsy(["session", "show", id, "--json"], { env: sys.env });
    const raw = JSON.parse(show.stdout) as { session: { alert_data: string; runbook_url: string } };
    expect(raw.session.alert_data).toBe("payments-api is crash looping in namespace payments");
    expect(raw.session.runbook_url).toBe("https://github.com/acme/runbooks/blob/main/oom.md");
  }, 60_000);

  it("dlq list shows a dead letter made by an invalid raw message; discard and redrive act on it", async () => {
    const nc = await connectRawNats(sys.stack.natsUrl, "cli-test");
    const subject = `${sys.stack.prefix}.${WORK_SUBJECTS.sessionSubmitted}`;
    try {
      // A buggy producer: one body that is not JSON, one without alert_type.
      nc.publish(subject, "{not json");
      nc.publish(
        subject,
        JSON.stringify({ v: 1, session_id: "s-bad", submitted_at: new Date().toISOString() }),
      );
      await nc.flush();
    } finally {
      await nc.close();
    }
    const listed = async () => {
      for (let i = 0; i < 100; i++) {
        const run = await tarsy(["dlq", "list", "--json"], { env: sys.env });
        expect(run.code).toBe(0);
        const items = jsonLines(run.stdout) as unknown as {
          seq: number;
          letter: { data: string; error: string; original_subject: string };
        }[];
        if (items.length >= 2) return items;
        await new Promise((r) => setTimeout(r, 300));
      }
      throw new Error("no dead letters appeared");
    };
    const items = await listed();
    expect(items.map((i) => i.letter.data)).toEqual([
      "{not json",
      expect.stringContaining('"s-bad"'),
    ]);
    expect(items[0]?.letter.error).toMatch(/^invalid JSON/);
    expect(items[1]?.letter.original_subject).toBe(WORK_SUBJECTS.sessionSubmitted);

    const table = await tarsy(["dlq", "list"], { env: sys.env });
    expect(table.stdout).toMatch(/^SEQ +SUBJECT +DELIV +FAILED AT +ERROR\n/);
    expect(table.stdout).toMatch(
      new RegExp(
        `\\n${items[0]?.seq} +work\\.orchestrator\\.session_submitted +1 +\\S+ +invalid JSON`,
      ),
    );

    const [notJson, bad] = items as [(typeof items)[0], (typeof items)[0]];
    const discarded = await tarsy(["dlq", "discard", String(notJson.seq)], { env: sys.env });
    expect(discarded.code).toBe(0);
    expect(discarded.stdout).toBe(`Discarded dead letter ${notJson.seq}.\n`);

    // Redrive publishes the body to its subject again: the orchestrator refuses it again,
    // so it comes back as a new dead letter, and the old one is gone.
    const redriven = await tarsy(["dlq", "redrive", String(bad.seq)], { env: sys.env });
    expect(redriven.stderr).toBe("");
    expect(redriven.code).toBe(0);
    expect(redriven.stdout).toMatch(
      new RegExp(
        `^Redrove dead letter ${bad.seq} to ${sys.stack.prefix}\\.work\\.orchestrator\\.session_submitted`,
      ),
    );
    const again = await (async () => {
      for (let i = 0; i < 100; i++) {
        const run = await tarsy(["dlq", "list", "--json"], { env: sys.env });
        const now = jsonLines(run.stdout) as unknown as typeof items;
        if (now.some((x) => x.seq > bad.seq)) return now;
        await new Promise((r) => setTimeout(r, 300));
      }
      throw new Error("the redriven message did not come back");
    })();
    expect(again.map((x) => x.seq)).not.toContain(notJson.seq);
    expect(again.map((x) => x.seq)).not.toContain(bad.seq);
    expect(again).toHaveLength(1);
    expect(again[0]?.letter.data).toBe(bad.letter.data);

    const missing = await tarsy(["dlq", "redrive", String(bad.seq)], { env: sys.env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no dead letter with sequence ${bad.seq}`);
  }, 90_000);

  it("errors exit non-zero with the API's code and message, or say what cannot be reached", async () => {
    const unknown = await tarsy(["session", "show", "no-such-session"], { env: sys.env });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/^tarsy session show: API error 404 not_found: .+\n$/);

    const chat = await tarsy(["chat", "no-such-session", "hello?"], { env: sys.env });
    expect(chat.code).toBe(1);
    expect(chat.stderr).toContain("API error 404 not_found");

    const badType = await tarsy(["alert", "submit", "-", "--type", "NoSuchAlert"], {
      env: sys.env,
      stdin: "something broke",
    });
    expect(badType.code).toBe(1);
    expect(badType.stderr).toMatch(/API error 4\d\d unknown_alert_type: .*NoSuchAlert/);

    const empty = await tarsy(["alert", "submit", "-"], { env: sys.env, stdin: "  \n" });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("the alert is empty");

    const port = await closedPort();
    const apiDown = await tarsy(["session", "show", sessionId], {
      env: { ...sys.env, TARSY_API_URL: `http://127.0.0.1:${port}` },
    });
    expect(apiDown.code).toBe(1);
    expect(apiDown.stderr).toContain(`cannot reach the TARSy API at http://127.0.0.1:${port}`);
    expect(apiDown.stderr).toContain("ECONNREFUSED");

    const wsDown = await tarsy(["session", "watch", sessionId], {
      env: { ...sys.env, TARSY_WS_URL: `ws://127.0.0.1:${port}/api/v1/ws` },
    });
    expect(wsDown.code).toBe(1);
    expect(wsDown.stderr).toContain("cannot reach the TARSy WebSocket");

    const natsDown = await tarsy(["dlq", "list"], {
      env: { ...sys.env, NATS_URL: `nats://127.0.0.1:${port}` },
    });
    expect(natsDown.code).toBe(1);
    expect(natsDown.stderr).toContain(`cannot reach NATS at nats://127.0.0.1:${port}`);

    const usage = await tarsy(["session", "show"], { env: sys.env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("Usage: tarsy session show");
  }, 90_000);

  it("session watch survives a dropped connection: it catches up from the last event, nothing missed or repeated", async () => {
    // A TCP proxy in front of stream-relay that we can cut, as a flaky network would.
    const relay = new URL(sys.stack.wsUrl);
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const upstream = connect(Number(relay.port), relay.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const address = proxy.address();
    if (!address || typeof address === "string") throw new Error("no proxy port");
    try {
      // A triage that streams for about 12 s: the session is still running when the
      // connection is cut, even when the two CLI runs before it start slowly on a busy machine.
      const submitted = await tarsy(["alert", "submit", "-"], {
        env: sys.env,
        stdin: JSON.stringify({ ...DEMO_ALERT, note: "cli-slow-triage" }),
      });
      const id = submitted.stdout.trim();
      let cut = false;
      const watch = await tarsy(["session", "watch", id], {
        env: { ...sys.env, TARSY_WS_URL: `ws://127.0.0.1:${address.port}${relay.pathname}` },
        timeoutMs: 150_000,
        onStdout(sofar) {
          if (!cut && sofar.includes("▶ stage 1 triage: started")) {
            cut = true;
            for (const s of sockets) s.destroy();
          }
        },
      });
      expect(cut).toBe(true);
      expect(watch.code).toBe(0);
      expect(watch.stderr).toMatch(
        /connection lost .*reconnecting in \d+ ms \(last event [1-9]\d*\)/,
      );
      // The lifecycle lines equal those of a replay after the fact: in order, once each.
      const lifecycle = (text: string) =>
        text.split("\n").filter((line) => line.startsWith("▶") || line.startsWith("●"));
      const replay = await tarsy(["session", "watch", id], { env: sys.env });
      expect(lifecycle(watch.stdout)).toEqual(lifecycle(replay.stdout));
      expect(lifecycle(watch.stdout).filter((l) => l === "● session completed")).toHaveLength(1);
      expect(watch.stdout).toContain(SYNTHESIS_END);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    }
  }, 200_000);

  onCallTests({ sys: () => sys, completedSession: () => sessionId });
});
