import { randomBytes } from "node:crypto";
import { createTokenSeal } from "@tarsy/authz";
import { getChatUserMessage, getSession } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finishSession, seedSession } from "./seed.ts";
import { eventually, type Harness, request, startHarness } from "./support.ts";

const USER_TOKEN = "eyJ.user-token-of-alice.sig";
const seal = createTokenSeal(randomBytes(32));

describe("the submitting user's token (per-user MCP credentials)", () => {
  let h: Harness;
  let plain: Harness;
  beforeAll(async () => {
    h = await startHarness({ tokenSeal: seal });
    plain = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
    await plain?.close();
  });

  const proxied = { "X-Forwarded-User": "alice", "X-Forwarded-Access-Token": USER_TOKEN };

  it("is sealed onto the session row it creates, with its expiry, and nowhere else", async () => {
    const before = Date.now();
    const res = await request<{ session_id: string }>(`${h.url}/api/v1/alerts`, {
      body: { data: "pod crashlooping" },
      headers: proxied,
    });
    expect(res.status).toBe(202);
    const row = await getSession(h.db.prisma, res.body.session_id);
    expect(row?.userToken).toBeTruthy();
    expect(row?.userToken).not.toContain(USER_TOKEN);
    expect(seal.open(row?.userToken ?? "")).toBe(USER_TOKEN);
    const expires = row?.userTokenExpiresAt?.getTime() ?? 0;
    const ttl = h.deps.config.authorization.user_token_ttl_ms;
    expect(expires).toBeGreaterThanOrEqual(before + ttl);
    expect(expires).toBeLessThanOrEqual(Date.now() + ttl);
    await eventually(() =>
      h.received.sessionSubmitted.some((m) => m.session_id === res.body.session_id),
    );
    expect(JSON.stringify(h.received.sessionSubmitted)).not.toContain(USER_TOKEN);
    const detail = await request(`${h.url}/api/v1/sessions/${res.body.session_id}`, {
      method: "GET",
      headers: proxied,
    });
    expect(JSON.stringify(detail.body)).not.toContain(USER_TOKEN);
    expect(JSON.stringify(detail.body)).not.toContain(row?.userToken ?? "");
  });

  it("is sealed onto the chat message of each chat request", async () => {
    const s = await seedSession(h.db.prisma);
    await finishSession(h.db.prisma, s.id, "completed", { finalAnalysis: "done" });
    const res = await request<{ message_id: string }>(
      `${h.url}/api/v1/sessions/${s.id}/chat/messages`,
      { body: { content: "why?" }, headers: proxied },
    );
    expect(res.status).toBe(202);
    const message = await getChatUserMessage(h.db.prisma, res.body.message_id);
    expect(seal.open(message?.userToken ?? "")).toBe(USER_TOKEN);
    expect(message?.userTokenExpiresAt).toBeInstanceOf(Date);
    await eventually(() =>
      h.received.chatSubmitted.some((m) => m.message_id === res.body.message_id),
    );
    expect(JSON.stringify(h.received.chatSubmitted)).not.toContain(USER_TOKEN);
  });

  it("is not kept without a user token, or without TARSY_TOKEN_KEY", async () => {
    const anonymous = await request<{ session_id: string }>(`${h.url}/api/v1/alerts`, {
      body: { data: "x" },
    });
    expect((await getSession(h.db.prisma, anonymous.body.session_id))?.userToken).toBeNull();
    const keyless = await request<{ session_id: string }>(`${plain.url}/api/v1/alerts`, {
      body: { data: "x" },
      headers: proxied,
    });
    expect(keyless.status).toBe(202);
    const row = await getSession(plain.db.prisma, keyless.body.session_id);
    expect([row?.userToken, row?.userTokenExpiresAt]).toEqual([null, null]);
  });
});
