import { type ChildProcess, execSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BusOptions, connectBus, createBusAdmin } from "../src/index.ts";
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
        await createBusAdmin(bus).provision();
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

  it("connects over TLS when given the CA, and refuses a server it cannot verify", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tarsy-nats-tls-"));
    try {
      const run = (args: string) => execSync(`openssl ${args}`, { cwd: dir, stdio: "ignore" });
      run(
        "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=tarsy-test-ca",
      );
      run("req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1");
      writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
      run(
        "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 1 -extfile ext.cnf",
      );
      const port = await freePort();
      const server = startNatsServer(port, join(dir, "store"), [
        "--tls",
        "--tlscert",
        join(dir, "server.pem"),
        "--tlskey",
        join(dir, "server.key"),
      ]);
      try {
        const url = `tls://127.0.0.1:${port}`;
        const bus = await eventually(
          () =>
            connectBus({ ...base(url), tls: { caFile: join(dir, "ca.pem") } }).catch(
              () => undefined,
            ),
          10_000,
          "TLS server",
        );
        try {
          await createBusAdmin(bus).provision();
          expect((await bus.publish("executionRequested", executionRequested()))[0]?.seq).toBe(1);
        } finally {
          await bus.close();
        }
        await expect(connectBus(base(url))).rejects.toThrow();
      } finally {
        server.kill("SIGKILL");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
