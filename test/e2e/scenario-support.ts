import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ExecutionStatus, SessionStatus } from "@tarsy/contracts";
import type { FakeSlack, TestClient, WebhookReceiver } from "@tarsy/testkit";
import { until } from "@tarsy/testkit";
import { type E2E, EVERYTHING_ENV, ROOT } from "./support.ts";

/** Config dirs of the scenarios (tarsy.yaml, llm-providers.yaml, llm-script.yaml). */
export const SCENARIOS_DIR = resolve(ROOT, "test/e2e/testdata/scenarios");
export const REPLICAS_DIR = resolve(ROOT, "test/e2e/testdata/replicas");
const NOTIFICATIONS_DIR = resolve(ROOT, "test/e2e/testdata/notifications");

/**
 * The stack options of the notifications config: Slack is the loopback Web API `slack`, the
 * webhook the loopback receiver `hook` (signed with `secret`), retries after half a second.
 */
export function notificationsStack(slack: FakeSlack, hook: WebhookReceiver, secret: string) {
  return {
    configDir: NOTIFICATIONS_DIR,
    llmScriptPath: resolve(NOTIFICATIONS_DIR, "llm-script.yaml"),
    env: {
      ...EVERYTHING_ENV,
      FAKE_SLACK_URL: slack.url,
      SLACK_BOT_TOKEN: slack.token,
      FAKE_WEBHOOK_URL: hook.url,
      WEBHOOK_SECRET: secret,
      NOTIFIER_RETRY_INITIAL_MS: "500",
    },
  };
}

export interface Stage {
  id: string;
  stage_name: string;
  kind: string;
  status: ExecutionStatus;
  error_message?: string | null;
  executions: { agent_name: string; status: ExecutionStatus; error_message?: string | null }[];
}
export interface Detail {
  id: string;
  status: SessionStatus;
  error_message: string | null;
  final_analysis: string | null;
  executive_summary: string | null;
  executive_summary_error: string | null;
  started_at: string | null;
  completed_at: string | null;
  stages: Stage[];
}
export interface TimelineEvent {
  id: string;
  sequence_number: number;
  event_type: string;
  status: string;
  content: string;
  stage_id: string | null;
}

/** POST /api/v1/alerts as a user; the session id. */
export async function submitAlert(
  sys: E2E,
  alertType: string,
  data: Record<string, unknown> = { note: alertType },
  apiUrl?: string,
): Promise<string> {
  const init = {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-user": "e2e" },
    body: JSON.stringify({ alert_type: alertType, data }),
  };
  const response = await fetch(`${apiUrl ?? sys.stack.apiUrl}/api/v1/alerts`, init);
  const body = (await response.json()) as { session_id: string; status: string };
  if (response.status !== 202) {
    throw new Error(`submit ${alertType}: ${response.status} ${JSON.stringify(body)}`);
  }
  return body.session_id;
}

export async function detail(sys: E2E, id: string): Promise<Detail> {
  const r = await sys.api<Detail>(`/api/v1/sessions/${id}`);
  if (r.status !== 200) throw new Error(`GET session ${id}: ${r.status}`);
  return r.body;
}

export async function waitStatus(
  sys: E2E,
  id: string,
  statuses: readonly string[],
  timeoutMs: number,
): Promise<Detail> {
  return until(
    async () => {
      const d = await detail(sys, id);
      return statuses.includes(d.status) ? d : null;
    },
    { what: `session ${id} to be ${statuses.join("|")}`, timeoutMs },
  );
}

export async function timeline(sys: E2E, id: string): Promise<TimelineEvent[]> {
  const r = await sys.api<{ events: TimelineEvent[] }>(`/api/v1/sessions/${id}/timeline`);
  return r.body.events;
}

/** POST a chat question; resolves with the answering chat stage once it exists. */
export async function ask(sys: E2E, id: string, content: string): Promise<Stage> {
  const before = (await detail(sys, id)).stages.filter((s) => s.kind === "chat").length;
  const r = await sys.api(`/api/v1/sessions/${id}/chat/messages`, {
    method: "POST",
    headers: { "x-forwarded-user": "e2e" },
    body: JSON.stringify({ content }),
  });
  if (r.status !== 202) throw new Error(`chat: ${r.status} ${JSON.stringify(r.body)}`);
  return until(
    async () => (await detail(sys, id)).stages.filter((s) => s.kind === "chat")[before],
    { what: `the chat stage answering "${content}"`, timeoutMs: 30_000 },
  );
}

export async function chatStage(sys: E2E, id: string, stageId: string): Promise<Stage> {
  const d = await detail(sys, id);
  const stage = d.stages.find((s) => s.id === stageId);
  if (!stage) throw new Error(`no stage ${stageId}`);
  return stage;
}

/** The `session.status` values the `sessions` channel announced for one session, in order. */
export function announcedStatuses(ws: TestClient, id: string): string[] {
  return ws.frames.flatMap((f) =>
    "id" in f &&
    f.channel === "sessions" &&
    f.payload.type === "session.status" &&
    f.payload.session_id === id
      ? [f.payload.status]
      : [],
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes every service's log lines to the temp dir (read them when a scenario fails). */
export function saveLogs(sys: E2E | undefined, name: string): void {
  if (!sys) return;
  const file = join(tmpdir(), `tarsy-e2e-${name}.log`);
  writeFileSync(file, `${sys.logs.join("\n")}\n`);
}

/** Resolves once the `sessions` channel announced `status` for the session. */
export async function announced(ws: TestClient, id: string, status: string): Promise<void> {
  await ws.waitFor(
    (f) =>
      "id" in f &&
      f.channel === "sessions" &&
      f.payload.type === "session.status" &&
      f.payload.session_id === id &&
      f.payload.status === status,
    10_000,
  );
}
