import { getSession } from "@tarsy/db";
import { countStoredRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { type ErrorBody, eventually, type Harness, request, startHarness } from "./support.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ gateway: true });
});
afterAll(async () => {
  await h?.close();
});

const post = <T = Record<string, unknown>>(body: unknown, headers?: Record<string, string>) =>
  request<T>(`${h.url}/api/v1/alerts`, { method: "POST", body, ...(headers ? { headers } : {}) });

const stored = (id: string) => getSession(h.db.prisma, id);
const sessionCount = async () => (await countStoredRows(h.db.prisma)).sessions;

describe("POST /api/v1/alerts", () => {
  it("stores a queued session and tells the orchestrator over NATS", async () => {
    const res = await post<{ session_id: string; status: string }>({
      alert_type: "kubernetes",
      data: { pod: "api-1", reason: "CrashLoopBackOff" },
      runbook: "https://github.com/acme/runbooks/blob/main/crashloop.md",
    });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe("queued");
    const row = await stored(res.body.session_id);
    expect(row).toMatchObject({
      status: "pending",
      alertType: "kubernetes",
      chainId: "kubernetes-agent-chain",
      runbookUrl: "https://github.com/acme/runbooks/blob/main/crashloop.md",
    });
    expect(JSON.parse(row?.alertData ?? "")).toEqual({ pod: "api-1", reason: "CrashLoopBackOff" });
    await eventually(() => h.received.sessionSubmitted.some((m) => m.session_id === row?.id));
    const msg = h.received.sessionSubmitted.find((m) => m.session_id === row?.id);
    expect(msg).toMatchObject({ alert_type: "kubernetes", chain_id: "kubernetes-agent-chain" });
  });

  it("uses the default alert type when none is given and keeps text data as text", async () => {
    const res = await post<{ session_id: string }>({ data: "disk full on node-3" });
    expect(res.status).toBe(202);
    const row = await stored(res.body.session_id);
    expect(row?.alertType).toBe("kubernetes");
    expect(row?.alertData).toBe("disk full on node-3");
  });

  it("takes the author from X-Forwarded-User, then X-Forwarded-Email, else api-client", async () => {
    const both = await post<{ session_id: string }>(
      { data: "x" },
      { "X-Forwarded-User": "alice", "X-Forwarded-Email": "alice@example.com" },
    );
    const email = await post<{ session_id: string }>(
      { data: "x" },
      { "X-Forwarded-Email": "bob@example.com" },
    );
    const none = await post<{ session_id: string }>({ data: "x" });
    expect((await stored(both.body.session_id))?.author).toBe("alice");
    expect((await stored(email.body.session_id))?.author).toBe("bob@example.com");
    expect((await stored(none.body.session_id))?.author).toBe("api-client");
  });

  it("keeps slack_message_fingerprint on the session (masked like the alert data)", async () => {
    const plain = await post<{ session_id: string }>({
      data: "x",
      slack_message_fingerprint: "  INC-4242 checkout down ",
    });
    expect(plain.status).toBe(202);
    expect((await stored(plain.body.session_id))?.slackMessageFingerprint).toBe(
      "INC-4242 checkout down",
    );
    const secret = await post<{ session_id: string }>({
      data: "x",
      slack_message_fingerprint: '{"password": "hunter2-s3cr3t"}',
    });
    const row = await stored(secret.body.session_id);
    expect(row?.slackMessageFingerprint).not.toContain("hunter2-s3cr3t");
    expect(row?.slackMessageFingerprint).toContain("[MASKED_SECRET]");
    const empty = await post<{ error: { code: string } }>({
      data: "x",
      slack_message_fingerprint: " ",
    });
    expect(empty.status).toBe(400);
    expect(
      (await stored((await post<{ session_id: string }>({ data: "x" })).body.session_id))
        ?.slackMessageFingerprint,
    ).toBeNull();
  });

  it("masks a secret planted in the alert data before storing it", async () => {
    const res = await post<{ session_id: string }>({
      data: { message: "db login failed", password: "hunter2-s3cr3t", owner: "ops@example.com" },
    });
    expect(res.status).toBe(202);
    const row = await stored(res.body.session_id);
    expect(row?.alertData).not.toContain("hunter2-s3cr3t");
    expect(row?.alertData).toContain("[MASKED_SECRET]");
    expect(row?.alertData).toContain("db login failed");
    const detail = await request<{ alert_data: string }>(
      `${h.url}/api/v1/sessions/${res.body.session_id}`,
    );
    expect(detail.body.alert_data).not.toContain("hunter2-s3cr3t");
  });

  it("accepts alert data of exactly 1 MB and rejects one byte more with 413", async () => {
    const limit = 1024 * 1024;
    const atLimit = await post<{ session_id: string }>({ data: "a".repeat(limit) });
    expect(atLimit.status).toBe(202);
    expect((await stored(atLimit.body.session_id))?.alertData.length).toBe(limit);

    const before = await sessionCount();
    const over = await post<ErrorBody>({ data: "a".repeat(limit + 1) });
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe("payload_too_large");
    expect(await sessionCount()).toBe(before);

    // Multi-byte characters count as bytes, not characters.
    const wide = await post<ErrorBody>({ data: "é".repeat(limit / 2 + 1) });
    expect(wide.status).toBe(413);
    // A body far past the limit is refused without reading it all.
    const huge = await post<ErrorBody>({ data: "a".repeat(3 * limit) });
    expect(huge.status).toBe(413);
  });

  it("rejects an unknown alert type with 400 listing the known ones", async () => {
    const res = await post<ErrorBody>({ alert_type: "nope", data: "x" });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("unknown_alert_type");
    expect(res.body.error.details).toMatchObject({
      alert_type: "nope",
      known_alert_types: expect.arrayContaining(["kubernetes", "KubePodCrashLooping", "quiet"]),
    });
    expect(res.body.error.message).toContain("kubernetes");
  });

  it("validates an MCP override against config (servers) and the gateway (tools)", async () => {
    const ok = await post<{ session_id: string }>({
      data: "x",
      mcp: { servers: [{ name: "everything", tools: ["echo"] }] },
    });
    expect(ok.status).toBe(202);
    expect((await stored(ok.body.session_id))?.mcpSelection).toEqual({
      servers: [{ name: "everything", tools: ["echo"] }],
    });

    const server = await post<ErrorBody>({
      data: "x",
      mcp_selection: { servers: [{ name: "everything" }, { name: "ghost-server" }] },
    });
    expect(server.status).toBe(400);
    expect(server.body.error.code).toBe("unknown_mcp_server");
    expect(server.body.error.message).toContain("ghost-server");
    expect(server.body.error.details).toMatchObject({ unknown_servers: ["ghost-server"] });

    const tool = await post<ErrorBody>({
      data: "x",
      mcp: { servers: [{ name: "everything", tools: ["echo", "rm_rf"] }] },
    });
    expect(tool.status).toBe(400);
    expect(tool.body.error.code).toBe("unknown_mcp_tool");
    expect(tool.body.error.message).toContain("everything.rm_rf");
  });

  it("answers 415 for a non-JSON content type and 400 for malformed JSON", async () => {
    const text = await request<ErrorBody>(`${h.url}/api/v1/alerts`, {
      method: "POST",
      rawBody: "data=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe("unsupported_media_type");
    const broken = await request<ErrorBody>(`${h.url}/api/v1/alerts`, {
      method: "POST",
      rawBody: '{"data": ',
      headers: { "content-type": "application/json" },
    });
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe("bad_request");
  });

  it("answers 400 with field paths for an invalid body and stores nothing", async () => {
    const before = await sessionCount();
    const res = await post<{ error: { code: string; details: { fields: { path: string }[] } } }>({
      data: "",
      runbook: "not a url",
      mcp: { servers: [{ name: "" }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_failed");
    const paths = res.body.error.details.fields.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(["runbook", "mcp.servers.0.name"]));
    expect(paths.some((p) => p.startsWith("data"))).toBe(true);
    const missing = await post<{ error: { details: { fields: { path: string }[] } } }>({});
    expect(missing.body.error.details.fields.map((f) => f.path)).toContain("data");
    expect(await sessionCount()).toBe(before);
  });

  it("answers unknown routes with the error shape", async () => {
    const res = await request<ErrorBody>(`${h.url}/api/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });

  it("answers the same through app.request() as through the listening server", async () => {
    // An in-process request has no socket: it stands for a caller on loopback (a trusted proxy).
    const app = createApp({ ...h.deps, remoteAddressOf: () => "127.0.0.1" });
    const accepted = await app.request("/api/v1/alerts", {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-user": "erin" },
      body: JSON.stringify({ data: "in-process" }),
    });
    expect(accepted.status).toBe(202);
    const { session_id } = (await accepted.json()) as { session_id: string };
    expect((await stored(session_id))?.author).toBe("erin");
    const wrongType = await app.request("/api/v1/alerts", { method: "POST", body: "x" });
    expect(wrongType.status).toBe(415);
    expect(((await wrongType.json()) as ErrorBody).error.code).toBe("unsupported_media_type");
  });
});
