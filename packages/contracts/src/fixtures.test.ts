import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  CONSUMERS,
  MESSAGES,
  type MessageKey,
  type PersistentMessageDef,
  STREAMS,
  SUBJECT_PREFIXES,
  type TransientMessageDef,
} from "./catalog.ts";
import { HttpErrorBodySchema } from "./http.ts";
import { MCP_GATEWAY, mcpReplicaSubjectPrefix } from "./mcp.ts";
import {
  WsChunkFrameSchema,
  WsClientActionSchema,
  WsControlFrameSchema,
  WsEventFrameSchema,
  WsServerFrameSchema,
} from "./ws.ts";

/**
 * Golden wire examples: `fixtures/<messageKey>.json` for every catalog message, `fixtures/ws/`
 * for WebSocket frames, `fixtures/http/` for HTTP error bodies. To change a wire shape, edit
 * the schema and its fixture together; these tests fail until both agree.
 */
const FIXTURES = new URL("../fixtures/", import.meta.url);
const load = (name: string): unknown => JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8"));
const jsonFiles = (dir: string) =>
  readdirSync(new URL(dir, FIXTURES)).filter((f) => f.endsWith(".json"));

/** NATS subject matching: `*` is one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== "*" && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Parses and checks nothing was dropped: an unknown (e.g. misspelt) field fails too. */
function parsesExactly(schema: z.ZodType, value: unknown): void {
  const parsed = schema.parse(value);
  expect(parsed).toEqual(value);
}

const messageKeys = Object.keys(MESSAGES) as MessageKey[];

describe("subjectMatches", () => {
  it("follows NATS wildcard rules", () => {
    expect(subjectMatches("events.>", "events.session.a")).toBe(true);
    expect(subjectMatches("events.>", "events")).toBe(false);
    expect(subjectMatches("events.*", "events.session.a")).toBe(false);
    expect(subjectMatches("events.*.a", "events.session.a")).toBe(true);
    expect(subjectMatches("work.runner.>", "work.orchestrator.x")).toBe(false);
  });
});

describe("message fixtures", () => {
  it("exist for exactly the catalog's messages", () => {
    const files = jsonFiles("./").map((f) => f.replace(/\.json$/, ""));
    expect(files.sort()).toEqual([...messageKeys].sort());
  });

  it.each(messageKeys)("%s parses with its schema, field for field", (key) => {
    parsesExactly(MESSAGES[key].schema, load(`${key}.json`));
  });

  it.each(messageKeys)("%s is rejected without its version or with another one", (key) => {
    const fixture = load(`${key}.json`) as Record<string, unknown>;
    const { v: _v, ...unversioned } = fixture;
    expect(MESSAGES[key].schema.safeParse(unversioned).success).toBe(false);
    expect(MESSAGES[key].schema.safeParse({ ...fixture, v: 2 }).success).toBe(false);
  });

  it.each(messageKeys.filter((k) => MESSAGES[k].transport === "jetstream"))(
    "%s is stored under subjects of its own stream and nowhere else",
    (key) => {
      const def = MESSAGES[key] as unknown as PersistentMessageDef;
      const payload = def.schema.parse(load(`${key}.json`));
      const subjects = def.subjects(payload);
      expect(subjects.length).toBeGreaterThan(0);
      for (const subject of subjects) {
        expect(subject, `${key} → ${subject}`).toMatch(/^[A-Za-z0-9_.-]+$/);
        for (const [streamKey, stream] of Object.entries(STREAMS)) {
          const inside = stream.subjects.some((pattern) => subjectMatches(pattern, subject));
          expect(inside, `${subject} in ${streamKey}`).toBe(streamKey === def.stream);
        }
      }
      const id = def.msgId(payload);
      expect(id).toMatch(/^\S+$/);
      expect(def.msgId(def.schema.parse(load(`${key}.json`)))).toBe(id);
    },
  );

  it.each(messageKeys.filter((k) => MESSAGES[k].transport === "core"))(
    "%s (transient) is on a subject no stream stores",
    (key) => {
      const def = MESSAGES[key] as unknown as TransientMessageDef;
      for (const subject of def.subjects(def.schema.parse(load(`${key}.json`)))) {
        for (const stream of Object.values(STREAMS)) {
          expect(
            stream.subjects.some((p) => subjectMatches(p, subject)),
            subject,
          ).toBe(false);
        }
      }
    },
  );

  it("starts every subject with one of SUBJECT_PREFIXES (what the CI literal guard looks for)", () => {
    const subjects = [
      ...messageKeys.flatMap((key) => {
        const def = MESSAGES[key] as unknown as TransientMessageDef;
        return def.subjects(def.schema.parse(load(`${key}.json`)));
      }),
      ...Object.values(CONSUMERS).map((c) => c.filterSubject),
      ...Object.values(MCP_GATEWAY.methods).map((m) => `${MCP_GATEWAY.subjectPrefix}.${m.method}`),
      `${mcpReplicaSubjectPrefix("r1")}.${MCP_GATEWAY.methods.callTool.method}`,
    ];
    for (const subject of subjects) {
      expect(
        SUBJECT_PREFIXES.some((prefix) => subject.startsWith(`${prefix}.`)),
        subject,
      ).toBe(true);
    }
    expect([...SUBJECT_PREFIXES].sort()).toEqual([
      "chunks",
      "control",
      "dlq",
      "events",
      "mcp.gateway",
      "work",
    ]);
  });

  it("routes every work message to exactly the one consumer that handles it", () => {
    for (const key of messageKeys) {
      const def = MESSAGES[key];
      if (def.transport !== "jetstream" || def.stream !== "work") continue;
      const [subject] = (def as unknown as PersistentMessageDef).subjects(
        def.schema.parse(load(`${key}.json`)),
      );
      const owners = Object.entries(CONSUMERS).filter(
        ([, c]) => c.stream === "work" && subjectMatches(c.filterSubject, subject ?? ""),
      );
      expect(
        owners.map(([name]) => name),
        key,
      ).toHaveLength(1);
      expect(owners[0]?.[1].messages as readonly string[], key).toContain(key);
    }
  });
});

describe("WebSocket and HTTP fixtures", () => {
  it.each(jsonFiles("ws/"))("ws/%s parses", (file) => {
    const frame = load(`ws/${file}`);
    if (file.startsWith("client-")) {
      parsesExactly(WsClientActionSchema, frame);
      return;
    }
    expect(file.startsWith("server-")).toBe(true);
    parsesExactly(WsServerFrameSchema, frame);
    const specific =
      file === "server-event.json"
        ? WsEventFrameSchema
        : file === "server-chunk.json"
          ? WsChunkFrameSchema
          : WsControlFrameSchema;
    parsesExactly(specific, frame);
  });

  it("covers every client action and every control frame type", () => {
    const actions = jsonFiles("ws/")
      .filter((f) => f.startsWith("client-"))
      .map((f) => (load(`ws/${f}`) as { action: string }).action);
    expect(actions.sort()).toEqual(["catchup", "ping", "subscribe", "unsubscribe"]);
    const types = jsonFiles("ws/")
      .filter((f) => f.startsWith("server-"))
      .map((f) => (load(`ws/${f}`) as { type: string }).type);
    for (const option of WsControlFrameSchema.options) {
      expect(types).toContain(option.shape.type.value);
    }
  });

  it("rejects a catch-up without a last event id and a bad channel", () => {
    expect(WsClientActionSchema.safeParse({ action: "catchup", channel: "sessions" }).success).toBe(
      false,
    );
    expect(
      WsClientActionSchema.safeParse({ action: "subscribe", channel: "session:a b" }).success,
    ).toBe(false);
  });

  it.each(jsonFiles("http/"))("http/%s parses as the one HTTP error body", (file) => {
    parsesExactly(HttpErrorBodySchema, load(`http/${file}`));
  });

  it("rejects an HTTP error body with an unknown code", () => {
    const body = load("http/error-body-minimal.json") as { error: object };
    expect(HttpErrorBodySchema.safeParse({ error: { ...body.error, code: "oops" } }).success).toBe(
      false,
    );
  });
});
