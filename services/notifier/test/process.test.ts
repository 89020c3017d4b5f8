/**
 * The notifier as a process: ready with its dependencies, killed with SIGKILL in the middle of
 * a send (Slack has stored the message, the answer never arrives), then restarted: the message
 * is found in the thread and not posted again; SIGTERM stops it cleanly.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WEBHOOK_HEADERS } from "@tarsy/contracts";
import { expect } from "vitest";
import {
  CHANNEL,
  deliveryOf,
  newSession,
  notifierTest,
  postsFor,
  reach,
  writeNotifierConfig,
} from "./harness.ts";

const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));

interface Running {
  child: ChildProcess;
  output: () => string;
  /** `http://127.0.0.1:<port>` of its ops server. */
  ops: string;
}

async function startProcess(env: Record<string, string>): Promise<Running> {
  // node itself (not the tsx wrapper), so SIGKILL reaches the process that holds the send.
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: resolve(REPO_ROOT, "services/notifier"),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const ops = await new Promise<string>((resolveUrl, reject) => {
    const timer = setInterval(() => {
      const line = output.split("\n").find((l) => l.includes('"ops server listening'));
      if (line) {
        clearInterval(timer);
        resolveUrl((JSON.parse(line) as { url: string }).url);
      }
    }, 50);
    child.once("exit", (code) => {
      clearInterval(timer);
      reject(new Error(`notifier exited early (${code}):\n${output}`));
    });
  });
  for (const deadline = Date.now() + 30_000; ; ) {
    const ready = await fetch(`${ops}/ready`).catch(() => undefined);
    if (ready?.status === 200 && output.includes('"notifier started"')) break;
    if (Date.now() > deadline) throw new Error(`notifier not ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => output, ops };
}

async function waitFor(check: () => boolean, describe: () => string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check(); ) {
    if (Date.now() > deadline) throw new Error(`not seen in:\n${describe()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

notifierTest(
  "killed with SIGKILL mid-send: after a restart the message is found, not posted twice",
  async ({ t, nats, slack, hook }) => {
    const { dir, env } = writeNotifierConfig({ slack, webhooks: [{ url: hook.url }] });
    const processEnv = {
      ...env,
      DATABASE_URL: t.database.url,
      NATS_URL: nats.url,
      TARSY_SUBJECT_PREFIX: nats.prefix,
      TARSY_STREAM_SUFFIX: nats.streamSuffix,
      TARSY_CONFIG_DIR: dir,
      METRICS_HOST: "127.0.0.1",
      METRICS_PORT: "0",
      LOG_LEVEL: "info",
      NOTIFIER_LEASE_MS: "1500",
      NOTIFIER_SWEEP_INTERVAL_MS: "200",
    };
    const alert = slack.seed(CHANNEL, { text: "[FIRING:1] disk full fp-77" });
    const running: ChildProcess[] = [];
    try {
      const first = await startProcess({ ...processEnv, POD_ID: "notifier-1" });
      running.push(first.child);
      slack.holdPosts = true;
      const session = await newSession(t.db, "FP-77");
      const stored = slack.nextPost();
      await reach(t.db, nats.bus, session, "completed", {
        executiveSummary: "Disk full on node-3.",
      });
      expect((await stored).thread_ts).toBe(alert.ts);
      first.child.kill("SIGKILL");
      await once(first.child, "exit");
      slack.holdPosts = false;
      slack.releaseHeld();

      const second = await startProcess({ ...processEnv, POD_ID: "notifier-2" });
      running.push(second.child);
      const slackDelivery = await deliveryOf(t.db, session.id, "slack", "completed");
      expect(slackDelivery).toMatchObject({ status: "sent", attempts: 2, threadTs: alert.ts });
      expect(postsFor(slack, session.id)).toHaveLength(1);
      await waitFor(() => second.output().includes("a send cut short had happened"), second.output);
      const metrics = await (await fetch(`${second.ops}/metrics`)).text();
      expect(metrics).toContain(
        'tarsy_notifications_total{target="slack",event="completed",outcome="found",service="notifier"} 1',
      );
      // A webhook cannot be asked: it may be sent again, always under the same delivery id.
      const hookDelivery = await deliveryOf(t.db, session.id, "webhook:0", "completed");
      expect(hookDelivery.status).toBe("sent");
      expect(hook.requests.length).toBeGreaterThanOrEqual(1);
      expect(new Set(hook.requests.map((r) => r.headers[WEBHOOK_HEADERS.delivery]))).toEqual(
        new Set([hookDelivery.id]),
      );

      second.child.kill("SIGTERM");
      const [code] = await once(second.child, "exit");
      expect(code, second.output()).toBe(0);
    } finally {
      for (const child of running) if (child.exitCode === null) child.kill("SIGKILL");
    }
  },
  60_000,
);
