import { describe, expect, it } from "vitest";
import { parseLabelsLine } from "./labels.ts";

const builtin = {
  multi: false,
  labels: [{ label: "watch" }, { label: "action" }, { label: "noise" }],
};
const tags = {
  multi: true,
  labels: [{ label: "watch" }, { label: "page" }, { label: "modify_detection_rules" }],
};
const summary = "The pod was OOM-killed once and recovered.";

describe("the LABELS last line", () => {
  it("is read case-insensitively, stripped, and stored with the map's spelling", () => {
    expect(parseLabelsLine(`${summary}\nlabels: NOISE\n\n`, builtin)).toEqual({
      kind: "parsed",
      text: summary,
      labels: ["noise"],
    });
  });

  it("allows no space before or after the colon, spaces around it, and wrapping emphasis", () => {
    for (const line of [
      "LABELS:watch",
      "LABELS  :  watch",
      "**LABELS: watch**",
      "`LABELS: watch`",
    ]) {
      expect(parseLabelsLine(`${summary}\n${line}`, builtin), line).toMatchObject({
        kind: "parsed",
        labels: ["watch"],
      });
    }
  });

  it("drops one trailing period or semicolon, and empty tokens of a trailing comma", () => {
    expect(parseLabelsLine(`${summary}\nLABELS: action.`, builtin)).toMatchObject({
      labels: ["action"],
    });
    expect(parseLabelsLine(`${summary}\nLABELS: page;, watch,`, tags)).toMatchObject({
      labels: ["watch", "page"],
    });
  });

  it("an empty remainder is a valid empty list", () => {
    expect(parseLabelsLine(`${summary}\nLABELS:`, builtin)).toEqual({
      kind: "parsed",
      text: summary,
      labels: [],
    });
  });

  it("no LABELS prefix on the last line: no labels, the text unchanged", () => {
    const earlier = `LABELS: watch\n${summary}`;
    expect(parseLabelsLine(earlier, builtin)).toEqual({
      kind: "absent",
      text: earlier,
      labels: [],
    });
    const singular = `${summary}\nLABEL: watch`;
    expect(parseLabelsLine(singular, builtin)).toEqual({
      kind: "absent",
      text: singular,
      labels: [],
    });
  });

  it("unknown names, leftover words and emphasis inside the line are failures", () => {
    for (const line of [
      "LABELS: maybe",
      "LABELS: watch please",
      "LABELS: **watch**",
      "LABELS: none",
    ]) {
      expect(parseLabelsLine(`${summary}\n${line}`, builtin).kind, line).toBe("invalid");
    }
  });

  it("exclusive maps take at most one distinct name; a repeated one is one", () => {
    expect(parseLabelsLine(`${summary}\nLABELS: watch, Watch`, builtin)).toMatchObject({
      kind: "parsed",
      labels: ["watch"],
    });
    expect(parseLabelsLine(`${summary}\nLABELS: watch, noise`, builtin)).toMatchObject({
      kind: "invalid",
      reason: "more than one label where at most one applies",
    });
  });

  it("multi maps take any subset, unique, in the map's order", () => {
    expect(parseLabelsLine(`${summary}\nLABELS: MODIFY_DETECTION_RULES, page, Page`, tags)).toEqual(
      { kind: "parsed", text: summary, labels: ["page", "modify_detection_rules"] },
    );
    expect(parseLabelsLine(`${summary}\nLABELS: page, pager`, tags).kind).toBe("invalid");
  });

  it("a whole answer that is only the LABELS line leaves an empty summary", () => {
    expect(parseLabelsLine("LABELS: noise", builtin)).toEqual({
      kind: "parsed",
      text: "",
      labels: ["noise"],
    });
  });
});
