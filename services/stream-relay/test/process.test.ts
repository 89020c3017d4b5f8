import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { natsTest } from "@tarsy/testkit";
import { expect } from "vitest";
import { connectClient, publishEvents, waitForEvents } from "./helpers.ts";

const serviceDir = fileURLToPath(new URL("..", import.meta.url));

natsTest(
  "the relay runs as a process: serves a live session, then stops cleanly on SIGTERM",
  async ({ nats }) => {
    const child = spawn("node", ["--import", "tsx", "src/main.ts"], {
      cwd: serviceDir,
      env: {
        ...process.env,
        NATS_URL: nats.url,
        TARSY_SUBJECT_PREFIX: nats.prefix,
        TARSY_STREAM_SUFFIX: nats.streamSuffix,
        RELAY_HOST: "127.0.0.1",
        RELAY_PORT: "0",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buffer = "";
        child.stdout.on("data", (chunk: Buffer) => {
          buffer += chunk.toString();
          const match = buffer.match(/"url":"(ws:\/\/[^"]+)"/);
          if (match?.[1]) resolve(match[1]);
        });
        child.once("exit", (code) => reject(new Error(`relay exited early (${code})`)));
      });
      const client = await connectClient(url);
      const session = randomUUID();
      client.send({ action: "subscribe", channel: `session:${session}` });
      await client.waitFor((f) => f.type === "subscription.confirmed");
      const seqs = await publishEvents(nats.bus, session, 3);
      await waitForEvents(client, 3);
      expect(client.eventIds()).toEqual(seqs);

      const metricsUrl = new URL("/metrics", url.replace(/^ws/, "http"));
      const metrics = await (await fetch(metricsUrl)).text();
      const frames = (type: string) =>
        `tarsy_ws_frames_sent_total{type="${type}",service="stream-relay"}`;
      expect(metrics).toContain('tarsy_ws_connections{service="stream-relay"} 1\n');
      expect(metrics).toContain(`${frames("connection.established")} 1\n`);
      expect(metrics).toContain(`${frames("subscription.confirmed")} 1\n`);
      expect(metrics).toContain(`${frames("timeline_event.created")} 3\n`);
      const ready = await fetch(new URL("/ready", metricsUrl));
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: "ready",
        checks: { nats: { status: "ok" } },
      });
      expect(await (await fetch(new URL("/health", metricsUrl))).json()).toEqual({
        status: "healthy",
        version: "0.1.0",
        checks: { nats: { status: "healthy", latency_ms: expect.any(Number) } },
      });

      child.kill("SIGTERM");
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect((await client.closed).code).toBe(1001);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  },
);

natsTest(
  "the relay refuses to start with a policy that does not parse, naming file, path and line",
  async ({ nats }) => {
    const dir = mkdtempSync(join(tmpdir(), "tarsy-relay-policy-"));
    const file = join(dir, "tarsy.yaml");
    writeFileSync(
      file,
      [
        "authorization:",
        "  enabled: true",
        "  projects: [prod]",
        "  policy: |",
        "    p, role:sre, sessions, get, nowhere/*",
      ].join("\n"),
    );
    const child = spawn("node", ["--import", "tsx", "src/main.ts"], {
      cwd: serviceDir,
      env: {
        ...process.env,
        NATS_URL: nats.url,
        TARSY_SUBJECT_PREFIX: nats.prefix,
        TARSY_STREAM_SUFFIX: nats.streamSuffix,
        TARSY_CONFIG_DIR: dir,
        RELAY_HOST: "127.0.0.1",
        RELAY_PORT: "0",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    try {
      const [code] = await once(child, "exit");
      expect(code, output).not.toBe(0);
      expect(output).toContain(
        `${file}:5: authorization.policy: line 1 (file line 5): unknown project "nowhere"`,
      );
      expect(output).not.toMatch(/"url":"ws:/);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
