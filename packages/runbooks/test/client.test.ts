import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeGithub, startFakeGithub } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRunbookClient,
  type RunbookClientOptions,
  RunbookError,
  type RunbookSettingsInput,
} from "../src/index.ts";

let gh: FakeGithub;
const OOM = "acme/runbooks/main/sre/oom.md";

beforeAll(async () => {
  gh = await startFakeGithub({
    [OOM]: "# OOM\n\n1. Check the memory limit.",
    "acme/runbooks/main/sre/k8s/crashloop.md": "# CrashLoop",
    "acme/runbooks/main/sre/k8s/notes.txt": "not a runbook",
    "acme/runbooks/main/sre/broken/lost.md": "# never listed",
    "acme/runbooks/main/sre/deep/er/disk.md": "# Disk",
    "acme/runbooks/main/README.md": "# outside the listed directory",
  });
});
afterAll(async () => {
  await gh?.close();
});

function client(overrides: Partial<RunbookSettingsInput> = {}, options: RunbookClientOptions = {}) {
  return createRunbookClient(
    {
      allowedDomains: ["127.0.0.1"],
      allowPrivateAddresses: true,
      cacheTtlMs: 60_000,
      githubApiUrl: gh.url,
      repoUrl: `${gh.url}/acme/runbooks/tree/main/sre`,
      ...overrides,
    },
    options,
  );
}

async function refusal(promise: Promise<unknown>): Promise<RunbookError> {
  const err = await promise.then(
    () => {
      throw new Error("expected the fetch to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RunbookError);
  return err as RunbookError;
}

describe("fetching runbooks", () => {
  it("fetches the text, with the token as a bearer, from the blob URL", async () => {
    const c = client({ token: "ghp_test_token" });
    const text = await c.fetch(`${gh.url}/acme/runbooks/blob/main/sre/oom.md`);
    expect(text).toBe("# OOM\n\n1. Check the memory limit.");
    const last = gh.requests.at(-1);
    expect(last?.path).toBe("/acme/runbooks/blob/main/sre/oom.md");
    expect(last?.authorization).toBe("Bearer ghp_test_token");
  });

  it("sends no token when none is set", async () => {
    await client().fetch(`${gh.url}/${OOM}`);
    expect(gh.requests.at(-1)?.authorization).toBeUndefined();
  });

  it("caches a fetched text for the TTL, then fetches again", async () => {
    let now = 1_000_000;
    const c = client({ cacheTtlMs: 60_000 }, { now: () => now });
    const key = "acme/runbooks/main/sre/ttl.md";
    gh.files.set(key, "version 1");
    const url = `${gh.url}/${key}`;
    expect(await c.fetch(url)).toBe("version 1");
    gh.files.set(key, "version 2");
    now += 59_000;
    expect(await c.fetch(url)).toBe("version 1");
    expect(gh.hits(`/${key}`)).toBe(1);
    now += 2_000;
    expect(await c.fetch(url)).toBe("version 2");
    expect(gh.hits(`/${key}`)).toBe(2);
  });

  it("shares one request among concurrent fetches of the same URL", async () => {
    const key = "acme/runbooks/main/sre/shared.md";
    gh.files.set(key, "shared");
    const c = client();
    const texts = await Promise.all([1, 2, 3].map(() => c.fetch(`${gh.url}/${key}`)));
    expect(texts).toEqual(["shared", "shared", "shared"]);
    expect(gh.hits(`/${key}`)).toBe(1);
  });

  it("treats a non-200 answer as an error and does not cache it", async () => {
    const c = client();
    const err = await refusal(c.fetch(`${gh.url}/acme/runbooks/main/missing.md`));
    expect(err.code).toBe("http_status");
    expect(err.message).toMatch(/answered 404/);
  });

  it("refuses a host outside the allowlist before any request", async () => {
    const before = gh.requests.length;
    const err = await refusal(client().fetch(`${gh.url.replace("127.0.0.1", "localhost")}/${OOM}`));
    expect(err.code).toBe("url_not_allowed");
    expect(err.message).toMatch(/host localhost is not an allowed runbook domain/);
    expect(gh.requests.length).toBe(before);
  });

  it("follows a redirect on an allowed host, refuses one to a foreign host", async () => {
    const c = client();
    gh.redirects.set("/acme/moved.md", `${gh.url}/${OOM}`);
    expect(await c.fetch(`${gh.url}/acme/moved.md`)).toMatch(/^# OOM/);

    const foreign = `${gh.url.replace("127.0.0.1", "localhost")}/${OOM}`;
    gh.redirects.set("/acme/away.md", foreign);
    const before = gh.hits(`/${OOM}`);
    const err = await refusal(c.fetch(`${gh.url}/acme/away.md`));
    expect(err.code).toBe("redirect_refused");
    expect(err.message).toContain(`redirect to ${foreign}: host localhost is not allowed`);
    expect(gh.hits(`/${OOM}`)).toBe(before);
  });

  it("drops the token on a redirect to a host not trusted with it", async () => {
    const c = client({
      token: "ghp_test_token",
      allowedDomains: ["127.0.0.1", "localhost"],
      githubApiUrl: "https://api.github.com",
    });
    gh.redirects.set("/acme/hop.md", `${gh.url.replace("127.0.0.1", "localhost")}/${OOM}`);
    await c.fetch(`${gh.url}/acme/hop.md`);
    expect(gh.requests.at(-1)?.authorization).toBeUndefined();
  });

  it("refuses a private address without allow_private_addresses, literal or by name", async () => {
    const before = gh.requests.length;
    const c = client({ allowPrivateAddresses: false, allowedDomains: ["127.0.0.1", "localhost"] });
    const literal = await refusal(c.fetch(`${gh.url}/${OOM}`));
    expect(literal.code).toBe("address_not_allowed");
    expect(literal.message).toMatch(/127\.0\.0\.1 is in the loopback range/);
    const named = await refusal(c.fetch(`${gh.url.replace("127.0.0.1", "localhost")}/${OOM}`));
    expect(named.code).toBe("address_not_allowed");
    expect(named.message).toMatch(/localhost: address .* is in the loopback range/);
    expect(gh.requests.length).toBe(before);
  });

  it("refuses a redirect to a refused address (cloud metadata), even on an allowed host", async () => {
    const c = client({ allowedDomains: ["127.0.0.1", "169.254.169.254"] });
    gh.redirects.set("/acme/metadata.md", "http://169.254.169.254/latest/meta-data/");
    const err = await refusal(c.fetch(`${gh.url}/acme/metadata.md`));
    expect(err.code).toBe("address_not_allowed");
    expect(err.message).toMatch(
      /169\.254\.169\.254: address 169\.254\.169\.254 is in the linkLocal range/,
    );
  });

  it("caps the size of a runbook", async () => {
    const key = "acme/runbooks/main/sre/huge.md";
    gh.files.set(key, "x".repeat(5000));
    const err = await refusal(client({ maxBytes: 1000 }).fetch(`${gh.url}/${key}`));
    expect(err.code).toBe("too_large");
  });

  it("gives up after the timeout", async () => {
    gh.hanging.add("/acme/slow.md");
    const started = Date.now();
    const err = await refusal(client({ timeoutMs: 300 }).fetch(`${gh.url}/acme/slow.md`));
    expect(err.code).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("refuses a body larger than the cap even without a content-length", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("y".repeat(800));
      res.write("y".repeat(800));
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      const err = await refusal(client({ maxBytes: 1000 }).fetch(`http://127.0.0.1:${port}/x.md`));
      expect(err.code).toBe("too_large");
    } finally {
      server.close();
    }
  });
});

describe("listing runbooks", () => {
  it("lists the .md files under repo_url recursively, skipping a failing subdirectory", async () => {
    gh.failingDirs.add("acme/runbooks/main/sre/broken");
    const skipped: string[] = [];
    const c = client({}, { onSkipped: (path) => skipped.push(path) });
    const urls = await c.list();
    expect(urls).toEqual([
      `${gh.url}/acme/runbooks/blob/main/sre/deep/er/disk.md`,
      `${gh.url}/acme/runbooks/blob/main/sre/huge.md`,
      `${gh.url}/acme/runbooks/blob/main/sre/k8s/crashloop.md`,
      `${gh.url}/acme/runbooks/blob/main/sre/oom.md`,
      `${gh.url}/acme/runbooks/blob/main/sre/shared.md`,
      `${gh.url}/acme/runbooks/blob/main/sre/ttl.md`,
    ]);
    expect(skipped).toEqual(["sre/broken"]);
    expect(gh.requests.some((r) => r.path === "/repos/acme/runbooks/contents/sre?ref=main")).toBe(
      true,
    );
  });

  it("caches the listing for the TTL", async () => {
    let now = 0;
    const c = client({}, { now: () => now });
    const first = await c.list();
    const calls = gh.hits("/repos/acme/runbooks/contents/sre");
    gh.files.set("acme/runbooks/main/sre/new.md", "# New");
    expect(await c.list()).toEqual(first);
    expect(gh.hits("/repos/acme/runbooks/contents/sre")).toBe(calls);
    now += 60_001;
    expect(await c.list()).toContain(`${gh.url}/acme/runbooks/blob/main/sre/new.md`);
    gh.files.delete("acme/runbooks/main/sre/new.md");
  });

  it("is [] without a repository, and an error when the top directory cannot be read", async () => {
    expect(await client({ repoUrl: "" }).list()).toEqual([]);
    const missing = await refusal(client({ repoUrl: `${gh.url}/acme/nothing/tree/main/x` }).list());
    expect(missing.code).toBe("http_status");
  });
});
