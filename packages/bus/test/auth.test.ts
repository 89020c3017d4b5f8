import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BusOptions, connectBus } from "../src/index.ts";
import {
  captureLogger,
  eventually,
  executionRequested,
  freePort,
  startNatsServer,
} from "./support.ts";

/** Private servers that require credentials: the bus must present what it was given. */
describe("authentication", () => {
  const servers: { proc: ChildProcess; url: string; store: string }[] = [];
  let tokenUrl = "";
  let userUrl = "";

  beforeAll(async () => {
    for (const args of [
      ["--auth", "s3cret-token"],
      ["--user", "tarsy", "--pass", "pa55word"],
    ]) {
      const port = await freePort();
      const store = mkdtempSync(join(tmpdir(), "tarsy-nats-auth-"));
      servers.push({
        proc: startNatsServer(port, store, args),
        url: `nats://127.0.0.1:${port}`,
        store,
      });
    }
    tokenUrl = servers[0]!.url;
    userUrl = servers[1]!.url;
  });
  afterAll(() => {
    for (const s of servers) {
      s.proc.kill("SIGKILL");
      rmSync(s.store, { recursive: true, force: true });
    }
  });

  const base = (servers: string): BusOptions => ({
    servers,
    name: "auth-test",
    logger: captureLogger().logger,
    prefix: "auth",
  });

  it("connects with a token and with user/password, and provisions and publishes", async () => {
    for (const options of [
      { ...base(tokenUrl), auth: { kind: "token", token: "s3cret-token" } } as const,
      { ...base(userUrl), auth: { kind: "userPass", user: "tarsy", pass: "pa55word" } } as const,
    ]) {
      const bus = await eventually(
        () => connectBus(options).catch(() => undefined),
        10_000,
        "server",
      );
      try {
        await bus.provision();
        const [stored] = await bus.publish("executionRequested", executionRequested());
        expect(stored?.seq).toBe(1);
      } finally {
        await bus.close();
      }
    }
  });

  it("fails to connect with wrong or missing credentials, without logging the secret", async () => {
    await eventually(
      () =>
        connectBus({ ...base(tokenUrl), auth: { kind: "token", token: "s3cret-token" } })
          .then((b) => b.close().then(() => true))
          .catch(() => undefined),
      10_000,
      "server",
    );
    const { logger, lines } = captureLogger();
    await expect(
      connectBus({ ...base(tokenUrl), logger, auth: { kind: "token", token: "wrong-token" } }),
    ).rejects.toThrow(/authorization/i);
    await expect(connectBus({ ...base(userUrl), logger })).rejects.toThrow(/authorization/i);
    expect(JSON.stringify(lines())).not.toContain("wrong-token");
  });
});
