import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  BUILTIN_PATTERN_GROUPS,
  createMaskingService,
  type ServerMaskingConfig,
} from "../src/index.ts";

/**
 * The masking corpus: realistic tool output (Secrets, Deployments, Pods, `kubectl describe`,
 * kubeconfig, helm values and templates, `docker inspect`, env dumps, connection strings, HTTP
 * headers, keys and certificates, cloud credentials, logs, an MCP result holding YAML in a JSON
 * string) and two lists: strings that must be masked, and strings that must survive. Every
 * built-in group, and the reference default, must let no listed secret through and keep every
 * listed non-secret as often as it occurs.
 */

const corpus = new URL("./corpus/", import.meta.url);
const list = (name: string) =>
  readFileSync(new URL(name, corpus), "utf8")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"));
const samples = readdirSync(new URL("samples/", corpus))
  .sort()
  .map((file) => ({ file, text: readFileSync(new URL(`samples/${file}`, corpus), "utf8") }));
const mustMask = list("must-mask.txt");
const mustSurvive = list("must-survive.txt");

/** The reference default: the kubernetes-server MCP server's masking in the Go TARSy's config. */
const REFERENCE_DEFAULT: ServerMaskingConfig = {
  enabled: true,
  pattern_groups: ["kubernetes"],
  patterns: ["certificate", "token", "email"],
  custom_patterns: [],
};
const CONFIGS: { name: string; config: ServerMaskingConfig }[] = [
  { name: "reference default", config: REFERENCE_DEFAULT },
  ...Object.keys(BUILTIN_PATTERN_GROUPS).map((group) => ({
    name: `group ${group}`,
    config: { enabled: true, pattern_groups: [group], patterns: [], custom_patterns: [] },
  })),
];

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

describe("the masking corpus", () => {
  it("lists only strings that occur in the samples, and samples of every kind", () => {
    const all = samples.map((sample) => sample.text).join("\n");
    for (const secret of mustMask) expect(all, secret).toContain(secret);
    for (const kept of mustSurvive) expect(all, kept).toContain(kept);
    for (const secret of mustMask) {
      for (const kept of mustSurvive)
        expect(kept.includes(secret), `${kept} ⊃ ${secret}`).toBe(false);
    }
    expect(samples.length).toBeGreaterThanOrEqual(16);
    expect(mustMask.length).toBeGreaterThanOrEqual(60);
    expect(mustSurvive.length).toBeGreaterThanOrEqual(90);
  });

  describe.each(CONFIGS)("with the $name", ({ config }) => {
    const service = createMaskingService();

    it.each(samples)(
      "$file: no listed secret survives, every listed non-secret does",
      ({ text }) => {
        const result = service.maskToolResult(text, config);
        expect(result.failed).toBe(false);
        const leaks = mustMask.filter(
          (secret) => text.includes(secret) && result.content.includes(secret),
        );
        expect(leaks).toEqual([]);
        const lost = mustSurvive.filter(
          (kept) => occurrences(result.content, kept) !== occurrences(text, kept),
        );
        expect(lost).toEqual([]);
        if (mustMask.some((secret) => text.includes(secret))) {
          expect(result.redactions).toBeGreaterThan(0);
        }
      },
    );
  });

  it("masks alert data the same way (the default alert group, security)", () => {
    const service = createMaskingService();
    for (const { text } of samples) {
      const result = service.maskAlertData(text, { enabled: true, pattern_group: "security" });
      expect(result.failed).toBe(false);
      expect(mustMask.filter((secret) => result.content.includes(secret))).toEqual([]);
    }
  });

  it("masks each sample idempotently: masking the output again changes and counts nothing", () => {
    const service = createMaskingService();
    for (const { config } of CONFIGS) {
      for (const { text } of samples) {
        const once = service.maskToolResult(text, config);
        const twice = service.maskToolResult(once.content, config);
        expect(twice.content).toBe(once.content);
        expect(twice.redactions).toBe(0);
      }
    }
  });
});
