import { resolve } from "node:path";
import type { WsServerFrame } from "@tarsy/contracts";
import { connectClient, type TestClient, until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseExposition, type Sample, serviceOf, total } from "./prometheus.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const METRICS_DIR = resolve(ROOT, "test/e2e/testdata/metrics");
const SCRIPTED = { provider: "scripted", model: "scripted-metrics" };
const OPS_SERVICES = ["orchestrator", "agent-runner", "mcp-gateway", "llm-service", "notifier"];
/** What each ops server's /ready checks. */
const READY_CHECKS: Record<string, string[]> = {
  orchestrator: ["nats", "postgres"],
  "agent-runner": ["llm-service", "nats", "postgres"],
  "mcp-gateway": ["mcp_servers", "nats"],
  "llm-service": ["grpc"],
  notifier: ["nats", "postgres"],
};
/** What each ops server's /health reports on (the Go TARSy's `checks`). */
const HEALTH_CHECKS: Record<string, string[]> = {
  orchestrator: ["database", "nats"],
  "agent-runner": ["database", "nats", "worker_pool"],
  "mcp-gateway": ["nats"],
  "llm-service": ["grpc"],
  notifier: ["database", "nats"],
};

type Scrapes = Record<string, Sample[]>;

/** Every process's /metrics, parsed; checks the status and content type on the way. */
async function scrapeAll(urls: Record<string, string>): Promise<Scrapes> {
  const entries = await Promise.all(
    Object.entries(urls).map(async ([name, url]) => {
      const res = await fetch(url);
      expect(res.status, name).toBe(200);
      expect(res.headers.get("content-type"), name).toBe(
        "text/plain; version=0.0.4; charset=utf-8",
      );
      return [name, parseExposition(await res.text())] as const;
    }),
  );
  return Object.fromEntries(entries);
}

interface Detail {
  status: string;
  started_at: string;
  completed_at: string;
  token_usage: { input_tokens: number; output_tokens: number; thinking_tokens: number };
  stages: { id: string; kind: string; status: string; executions: { agent_name: string }[] }[];
}
interface Trace {
  stages: { executions: { agent_name: string; llm_interactions: unknown[] }[] }[];
  session_interactions: unknown[];
}

/**
 * Metrics: every service's /metrics is scraped before and after real work — an investigation
 * with tool calls (one to a tool the server lacks), a masked Secret, a masked alert field, a
 * parallel stage with synthesis, the executive summary, a WebSocket client watching, a
 * rejected alert and a chat turn whose LLM fails — and each counter moved by what happened.
 */
describe("e2e: Metrics", () => {
  let sys: E2E;
  let ws: TestClient;
  let before: Scrapes;
  let after: Scrapes;
  let sessionId: string;
  let detail: Detail;

  /** How much a series moved over the processes of `service` ("*": every process). */
  const delta = (service: string, name: string, labels: Record<string, string> = {}) => {
    const sum = (scrapes: Scrapes) =>
      Object.entries(scrapes)
        .filter(([process]) => service === "*" || serviceOf(process) === service)
        .reduce((n, [, samples]) => n + total(samples, name, labels), 0);
    return sum(after) - sum(before);
  };
  const sessionFrames = () =>
    ws.frames.filter((f) => "channel" in f && f.channel === `session:${sessionId}`);

  beforeAll(async () => {
    sys = await bootSystem({
      configDir: METRICS_DIR,
      llmScriptPath: resolve(METRICS_DIR, "llm-script.yaml"),
    });
    before = await scrapeAll(sys.stack.metricsUrls);

    ws = await connectClient(sys.stack.wsUrl);
    ws.send({ action: "subscribe", channel: "sessions" });
    await ws.waitFor((f) => f.type === "subscription.confirmed");

    const rejected = await sys.api("/api/v1/alerts", {
      method: "POST",
      body: JSON.stringify({ alert_type: "NoSuchAlertType", data: "x" }),
    });
    expect(rejected.status).toBe(400);
    const submitted = await sys.api<{ session_id: string }>("/api/v1/alerts", {
      method: "POST",
      body: JSON.stringify({
        alert_type: "MetricsProbe",
        data: { namespace: "payments", note: "db password=Sup3r-S3cret-42 leaked in the alert" },
      }),
    });
    expect(submitted.status).toBe(202);
    sessionId = submitted.body.session_id;
    ws.send({ action: "subscribe", channel: `session:${sessionId}` });
    await ws.waitFor(
      (f) => f.type === "subscription.confirmed" && f.channel === `session:${sessionId}`,
    );
    const isStatus = (f: WsServerFrame, status: string) =>
      "payload" in f &&
      f.channel === `session:${sessionId}` &&
      f.payload.type === "session.status" &&
      f.payload.status === status;
    await ws.waitFor((f) => isStatus(f, "completed") || isStatus(f, "failed"), 120_000);

    const chat = await sys.api(`/api/v1/sessions/${sessionId}/chat/messages`, {
      method: "POST",
      body: JSON.stringify({ content: "And the cost?" }),
    });
    expect(chat.status).toBe(202);
    // The chat stage's end is the last event the session publishes.
    await ws.waitFor(
      (f) =>
        "payload" in f &&
        f.channel === `session:${sessionId}` &&
        f.payload.type === "stage.status" &&
        f.payload.chat_id != null &&
        ["completed", "failed"].includes(f.payload.status), // wire-literal: the turn ended on its own
      60_000,
    );
    detail = await until(
      async () => {
        const r = await sys.api<Detail>(`/api/v1/sessions/${sessionId}`);
        const chatStage = r.body.stages.find((s) => s.kind === "chat");
        return chatStage && chatStage.status !== "active" ? r.body : null;
      },
      { what: "the chat stage in the API", timeoutMs: 10_000 },
    );
    after = await scrapeAll(sys.stack.metricsUrls);
  }, 240_000);

  afterAll(async () => {
    await ws?.close();
    await sys?.stop();
  }, 60_000);

  it("ran the scenario: the session completed, the chat turn failed", () => {
    expect(detail.status).toBe("completed");
    expect(detail.stages.map((s) => [s.kind, s.status])).toEqual([
      ["investigation", "completed"],
      ["investigation", "completed"],
      ["synthesis", "completed"],
      ["chat", "failed"],
    ]);
  });

  it("serves /health and /ready with its checks on the five ops servers, /metrics on all seven", async () => {
    const names = Object.keys(sys.stack.metricsUrls).map(serviceOf).sort();
    expect(names).toEqual([
      "agent-runner",
      "agent-runner",
      "ingest-api",
      "llm-service",
      "mcp-gateway",
      "notifier",
      "orchestrator",
      "stream-relay",
    ]);
    for (const [process, url] of Object.entries(sys.stack.metricsUrls)) {
      const service = serviceOf(process);
      // Process metrics, labelled with the service, on every one of them.
      expect(total(after[process] ?? [], "process_cpu_seconds_total", { service })).toBeGreaterThan(
        0,
      );
      if (!OPS_SERVICES.includes(service)) continue;
      const health = await fetch(new URL("/health", url));
      expect(health.status, process).toBe(200);
      const healthBody = (await health.json()) as {
        status: string;
        version: string;
        checks: Record<string, { status: string }>;
      };
      expect(healthBody, process).toMatchObject({ status: "healthy", version: "0.1.0" });
      expect(Object.keys(healthBody.checks).sort(), process).toEqual(HEALTH_CHECKS[service]);
      const ready = await fetch(new URL("/ready", url));
      const body = (await ready.json()) as {
        status: string;
        checks: Record<string, { status: string }>;
      };
      expect(ready.status, `${process}: ${JSON.stringify(body)}`).toBe(200);
      expect(body.status).toBe("ready");
      expect(Object.keys(body.checks).sort(), process).toEqual(READY_CHECKS[service]);
      for (const check of Object.values(body.checks)) expect(check.status).toBe("ok");
      const missing = await fetch(new URL("/nothing-here", url));
      expect(missing.status).toBe(404);
    }
  });

  it("orchestrator: one completed session with its duration, three completed stages and the failed chat stage", () => {
    expect(delta("orchestrator", "tarsy_sessions_total", { status: "completed" })).toBe(1);
    expect(delta("orchestrator", "tarsy_sessions_total")).toBe(1);
    expect(
      delta("orchestrator", "tarsy_session_duration_seconds_count", { status: "completed" }),
    ).toBe(1);
    const seconds = (Date.parse(detail.completed_at) - Date.parse(detail.started_at)) / 1000;
    expect(delta("orchestrator", "tarsy_session_duration_seconds_sum")).toBeCloseTo(seconds, 2);
    expect(
      delta("orchestrator", "tarsy_stage_duration_seconds_count", { status: "completed" }),
    ).toBe(3);
    expect(delta("orchestrator", "tarsy_stage_duration_seconds_count", { status: "failed" })).toBe(
      1,
    );
    expect(delta("orchestrator", "tarsy_stage_duration_seconds_sum")).toBeGreaterThan(0);
    // Read from Postgres at scrape: nothing runs now.
    expect(total(after["orchestrator-1"] ?? [], "tarsy_sessions_active")).toBe(0);
  });

  it("agent-runner: each agent's execution timed, every LLM request and its tokens counted", async () => {
    for (const agent of [
      "ProbeInvestigator",
      "LogAgent",
      "EventsAgent",
      "SynthesisAgent",
      "ExecSummaryAgent",
    ]) {
      const labels = { agent, status: "completed" };
      expect(delta("agent-runner", "tarsy_execution_duration_seconds_count", labels), agent).toBe(
        1,
      );
    }
    expect(
      delta("agent-runner", "tarsy_execution_duration_seconds_count", {
        agent: "ChatAgent",
        status: "failed",
      }),
    ).toBe(1);
    expect(delta("agent-runner", "tarsy_execution_duration_seconds_count")).toBe(6);

    // One request per recorded LLM interaction: 10 scripted answers and the failed chat call.
    const trace = (await sys.api<Trace>(`/api/v1/sessions/${sessionId}/trace`)).body;
    const interactions =
      trace.stages.flatMap((s) => s.executions).reduce((n, e) => n + e.llm_interactions.length, 0) +
      trace.session_interactions.length;
    expect(interactions).toBe(11);
    expect(delta("agent-runner", "tarsy_llm_requests_total", { ...SCRIPTED, status: "ok" })).toBe(
      10,
    );
    expect(
      delta("agent-runner", "tarsy_llm_requests_total", { ...SCRIPTED, status: "error" }),
    ).toBe(1);
    expect(delta("agent-runner", "tarsy_llm_requests_total")).toBe(interactions);
    expect(delta("agent-runner", "tarsy_llm_request_duration_seconds_count", SCRIPTED)).toBe(
      interactions,
    );

    // Tokens: exactly what the session's executions add up to.
    const usage = detail.token_usage;
    expect(usage.thinking_tokens).toBe(12);
    for (const [kind, tokens] of [
      ["input", usage.input_tokens],
      ["output", usage.output_tokens],
      ["thinking", usage.thinking_tokens],
    ] as const) {
      expect(tokens, kind).toBeGreaterThan(0);
      expect(delta("agent-runner", "tarsy_llm_tokens_total", { ...SCRIPTED, kind }), kind).toBe(
        tokens,
      );
    }
  });

  it("orchestrator and agent-runner: no redelivery, no dead letter, an empty runner backlog", () => {
    for (const service of ["orchestrator", "agent-runner"]) {
      expect(delta(service, "tarsy_work_redeliveries_total"), service).toBe(0);
      expect(delta(service, "tarsy_dead_letters_total"), service).toBe(0);
    }
    for (const process of ["agent-runner-1", "agent-runner-2"]) {
      const samples = after[process] ?? [];
      expect(samples.filter((s) => s.name === "tarsy_work_backlog_messages")).toEqual([
        {
          name: "tarsy_work_backlog_messages",
          labels: { consumer: "agent-runner", service: "agent-runner" },
          value: 0,
        },
      ]);
    }
    const orchestrator = (after["orchestrator-1"] ?? []).filter(
      (s) => s.name === "tarsy_work_backlog_messages",
    );
    expect(orchestrator.map((s) => s.labels.consumer)).toEqual(["orchestrator"]);
  });

  it("mcp-gateway: calls by server and tool, the unknown tool as an error, the masked Secret", () => {
    const calls = (tool: string, status: string) =>
      delta("mcp-gateway", "tarsy_mcp_calls_total", { server: "demo-cluster", tool, status });
    expect(calls("get_pods", "ok")).toBe(1);
    expect(calls("get_secret", "ok")).toBe(1);
    expect(calls("get_pod_logs", "ok")).toBe(2);
    expect(calls("get_events", "ok")).toBe(1);
    expect(calls("unknown", "error")).toBe(1);
    expect(delta("mcp-gateway", "tarsy_mcp_calls_total")).toBe(6);
    expect(
      delta("mcp-gateway", "tarsy_mcp_errors_total", {
        server: "demo-cluster",
        tool: "unknown",
        code: "unknown_tool",
      }),
    ).toBe(1);
    expect(delta("mcp-gateway", "tarsy_mcp_errors_total")).toBe(1);
    expect(
      delta("mcp-gateway", "tarsy_mcp_call_duration_seconds_count", {
        server: "demo-cluster",
        tool: "get_pod_logs",
      }),
    ).toBe(2);
    // The Secret's two data values.
    expect(
      delta("mcp-gateway", "tarsy_masking_redactions_total", { pattern: "kubernetes_secret" }),
    ).toBe(2);
  });

  it("ingest-api: the accepted and the rejected alert, the password masked in the alert data", () => {
    const received = (status: string) =>
      delta("ingest-api", "tarsy_alerts_received_total", { source: "api", status });
    expect(received("accepted")).toBe(1);
    expect(received("rejected")).toBe(1);
    expect(delta("ingest-api", "tarsy_alerts_received_total")).toBe(2);
    expect(
      delta("ingest-api", "tarsy_masking_redactions_total", { pattern: "secret_assignments" }),
    ).toBe(1);
  });

  it("llm-service: the provoked LLM error by provider, model and code", () => {
    expect(
      delta("llm-service", "tarsy_llm_errors_total", { ...SCRIPTED, code: "script_exhausted" }),
    ).toBe(1);
    expect(delta("llm-service", "tarsy_llm_errors_total")).toBe(1);
  });

  it("every publisher: events published by kind, exactly the events the session's channel carried", () => {
    const seen = new Map<string, number>();
    for (const f of sessionFrames()) {
      if ("id" in f) seen.set(f.type, (seen.get(f.type) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual([
      "chat.created",
      "chat.user_message",
      "review.status",
      "session.status",
      "stage.status",
      "timeline_event.completed",
      "timeline_event.created",
    ]);
    for (const [kind, count] of seen) {
      expect(delta("*", "tarsy_events_published_total", { kind }), kind).toBe(count);
    }
    expect(
      delta("orchestrator", "tarsy_events_published_total", { kind: "stage.status" }),
    ).toBeGreaterThan(0);
    expect(
      delta("agent-runner", "tarsy_events_published_total", { kind: "timeline_event.created" }),
    ).toBeGreaterThan(0);
    // Chunks are transient: the client saw those sent after it subscribed.
    const chunks = sessionFrames().filter((f) => f.type === "stream.chunk").length;
    expect(chunks).toBeGreaterThan(0);
    expect(
      delta("agent-runner", "tarsy_events_published_total", { kind: "stream.chunk" }),
    ).toBeGreaterThanOrEqual(chunks);
  });

  it("stream-relay: the client's connection, and every frame it received counted by type", () => {
    expect(delta("stream-relay", "tarsy_ws_connections")).toBe(1);
    const received = new Map<string, number>();
    for (const f of ws.frames) received.set(f.type, (received.get(f.type) ?? 0) + 1);
    expect(received.get("connection.established")).toBe(1);
    expect(received.get("subscription.confirmed")).toBe(2);
    for (const [type, count] of received) {
      expect(delta("stream-relay", "tarsy_ws_frames_sent_total", { type }), type).toBe(count);
    }
    expect(delta("stream-relay", "tarsy_ws_frames_sent_total")).toBe(ws.frames.length);
  });
});
