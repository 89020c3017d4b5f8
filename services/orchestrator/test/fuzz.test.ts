import { MESSAGES, type MessageKey, WORK_SUBJECTS, workSubject } from "@tarsy/contracts";
import { until } from "@tarsy/testkit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type SharedStack,
  simpleChainConfig,
  startSharedStack,
  submit,
  waitForSession,
  workMessages,
} from "./harness.ts";

const config = simpleChainConfig({ queue: { session_timeout: "10m" } });

/** A valid message of each orchestrator kind, naming ids that do not exist. */
const VALID: Record<string, () => Record<string, unknown>> = workMessages;
const KINDS = Object.keys(VALID) as (keyof typeof VALID & MessageKey)[];
const subjectOf = (key: MessageKey) => (WORK_SUBJECTS as Record<string, string>)[key] ?? "";

/** A valid message with one field dropped, retyped or replaced (often still valid). */
const nearMiss = (key: string) =>
  fc
    .tuple(
      fc.constantFrom(...Object.keys(VALID[key]?.() ?? {})),
      fc.oneof(
        fc.constant(undefined),
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom(2, "", "not-a-uuid", null, -1),
      ),
    )
    .map(([field, value]) => {
      const payload = VALID[key]?.() ?? {};
      if (value === undefined) delete payload[field];
      else payload[field] = value;
      return JSON.stringify(payload);
    });

const cases = fc.constantFrom(...KINDS, "bogus" as const).chain((kind) =>
  fc.record({
    kind: fc.constant(kind),
    body: fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      kind === "bogus" ? fc.constant("{}") : nearMiss(kind),
      fc.constant(null).map(() => JSON.stringify(kind === "bogus" ? {} : VALID[kind]?.())),
    ),
  }),
);

function expected(kind: MessageKey | "bogus", body: string | Uint8Array) {
  if (kind === "bogus") return "dead_letter";
  try {
    const text = typeof body === "string" ? body : new TextDecoder().decode(body);
    return MESSAGES[kind].schema.safeParse(JSON.parse(text)).success ? "orphaned" : "dead_letter";
  } catch {
    return "dead_letter";
  }
}

describe("payload fuzz on the orchestrator's work subjects (real Postgres and NATS)", () => {
  let stack: SharedStack<{ msg: string }>;

  beforeAll(async () => {
    stack = await startSharedStack(config, "error");
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const orphaned = async () =>
    (await stack.metrics.workOrphaned.get()).values.reduce((sum, v) => sum + v.value, 0);
  const deadLetters = async () => (await stack.nats.admin.listDeadLetters({ limit: 1_000 })).items;

  it("dead-letters every invalid message at once, drops every orphaned one, and keeps working", async () => {
    const seen = { dead_letter: 0, orphaned: 0 };
    await fc.assert(
      fc.asyncProperty(cases, async ({ kind, body }) => {
        const subject = kind === "bogus" ? workSubject("orchestrator", "bogus") : subjectOf(kind);
        const letters = (await deadLetters()).length;
        const drops = await orphaned();
        const raw = await stack.nats.raw();
        raw.publish(stack.nats.bus.subject(subject), body);
        await raw.flush();
        const outcome = await until(
          async () => {
            const [l, d] = [(await deadLetters()).length, await orphaned()];
            if (l === letters + 1 && d === drops) return "dead_letter" as const;
            if (d === drops + 1 && l === letters) return "orphaned" as const;
            return undefined;
          },
          { what: "the message to be dead-lettered or dropped", timeoutMs: 15_000 },
        );
        expect(outcome).toBe(expected(kind, body));
        seen[outcome]++;
        if (outcome === "dead_letter") {
          const letter = (await deadLetters()).at(-1)?.letter;
          expect(letter?.original_subject).toBe(subject);
          expect(letter?.deliveries).toBe(1);
          expect(letter?.error).toMatch(
            /^(invalid JSON|invalid [a-zA-Z]+ payload|no handler for subject)/,
          );
        }
      }),
      { numRuns: 60, seed: 20261125, interruptAfterTimeLimit: 30_000 },
    );
    expect(seen.dead_letter).toBeGreaterThan(10);
    expect(seen.orphaned).toBeGreaterThan(5);
    // A real alert still goes all the way through.
    const id = await submit(stack.t.db, "test-alert", "simple");
    await waitForSession(stack.t.db, id, ["completed"]);
    expect(stack.lines.filter((l) => l.msg !== "message dead-lettered")).toEqual([]);
  }, 60_000);
});
