import { sessionEventsSubject, WORK_SUBJECTS } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import { backoffDelay, DEFAULT_BACKOFF } from "./consume.ts";
import { BusInvalidOptionsError } from "./errors.ts";
import { Naming } from "./naming.ts";

describe("Naming", () => {
  it("prefixes subjects, suffixes stream names and maps subjects back", () => {
    const naming = new Naming("acme.tarsy", "_STAGING");
    expect(naming.subject(WORK_SUBJECTS.executionRequested)).toBe(
      "acme.tarsy.work.runner.execution_requested",
    );
    expect(naming.relative("acme.tarsy.events.session.a")).toBe(sessionEventsSubject("a"));
    expect(naming.relative("other.events.session.a")).toBeUndefined();
    expect(naming.stream("work")).toBe("TARSY_WORK_STAGING");
    expect(naming.streamKeyOf("TARSY_DLQ_STAGING")).toBe("dlq");
  });

  it.each([
    ["", ""],
    ["tarsy.", ""],
    ["tar sy", ""],
    ["tarsy.*", ""],
    ["tarsy.>", ""],
    ["tarsy", "_A.B"],
    ["tarsy", "A B"],
  ])("rejects prefix %j with suffix %j", (prefix, suffix) => {
    expect(() => new Naming(prefix, suffix)).toThrow(BusInvalidOptionsError);
  });
});

describe("backoffDelay", () => {
  it("grows by the factor per delivery and stops at the maximum", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(DEFAULT_BACKOFF, n))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000,
    ]);
    expect(backoffDelay({ initialMs: 250, factor: 3, maxMs: 5_000 }, 3)).toBe(2_250);
  });
});
