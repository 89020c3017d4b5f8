import { describe, expect, it } from "vitest";
import type { ServerMaskingConfig } from "./config.ts";
import type { CodeMasker } from "./masker.ts";
import {
  createMaskingService,
  type MaskingLogger,
  TOOL_RESULT_REDACTED_NOTICE,
} from "./service.ts";

const SECRET_OUTPUT = "db:\n  password: Hunter2-Payments!\n  host: payments-db\n";

function recordingLogger() {
  const lines: { level: string; fields: object; message: string }[] = [];
  const logger: MaskingLogger = {
    warn: (fields, message) => lines.push({ level: "warn", fields, message }),
    error: (fields, message) => lines.push({ level: "error", fields, message }),
  };
  return { logger, lines };
}

/** A structural masker that fails mid-way, as a parser bug would. */
const exploding: CodeMasker = {
  name: "exploding",
  appliesTo: () => true,
  mask: () => {
    throw new TypeError("cannot read properties of undefined");
  },
};

const basic = (extra: Partial<ServerMaskingConfig> = {}): ServerMaskingConfig => ({
  enabled: true,
  pattern_groups: ["basic"],
  patterns: [],
  custom_patterns: [],
  ...extra,
});

describe("maskToolResult (fail-closed)", () => {
  it("masks with the server's groups, patterns and custom patterns (custom ones first)", () => {
    const service = createMaskingService();
    const result = service.maskToolResult(
      "ticket CUSTOM-ABCDEF0123456789 from https://ops:hunter22@tickets.example.com and password=hunter22",
      basic({
        patterns: ["token"],
        custom_patterns: [
          {
            name: "custom_token",
            pattern: "CUSTOM-[A-Z0-9]{16}",
            replacement: "[MASKED_CUSTOM_TOKEN]",
          },
        ],
      }),
    );
    expect(result).toEqual({
      content:
        "ticket [MASKED_CUSTOM_TOKEN] from https://ops:[MASKED_PASSWORD]@tickets.example.com and password=[MASKED_SECRET]",
      redactions: 3,
      failed: false,
    });
  });

  it.each([
    { name: "no config", config: undefined },
    { name: "masking disabled", config: { ...basic(), enabled: false } },
  ])("returns content untouched with $name", ({ config }) => {
    const result = createMaskingService().maskToolResult(SECRET_OUTPUT, config);
    expect(result).toEqual({ content: SECRET_OUTPUT, redactions: 0, failed: false });
  });

  it.each([
    {
      name: "a code masker throws",
      config: basic({ patterns: ["exploding"] }),
      code: "masking_internal_error",
    },
    {
      name: "a custom regex does not compile",
      config: basic({ custom_patterns: [{ name: "broken", pattern: "([a-z", replacement: "x" }] }),
      code: "masking_invalid_pattern",
    },
    {
      name: "a group is unknown",
      config: basic({ pattern_groups: ["kubernetes", "typo"] }),
      code: "masking_unknown_group",
    },
    {
      name: "a pattern is unknown",
      config: basic({ patterns: ["tokn"] }),
      code: "masking_unknown_pattern",
    },
    {
      name: "the config is malformed",
      config: { enabled: true, pattern_groups: "basic" } as unknown as ServerMaskingConfig,
      code: "masking_invalid_config",
    },
  ])(
    "redacts the whole result when $name, and logs why without the content",
    ({ config, code }) => {
      const { logger, lines } = recordingLogger();
      const service = createMaskingService({ logger, codeMaskers: [exploding] });

      const result = service.maskToolResult(SECRET_OUTPUT, config, {
        serverId: "kubernetes-server",
      });

      expect(result).toEqual({ content: TOOL_RESULT_REDACTED_NOTICE, redactions: 1, failed: true });
      expect(result.content).not.toContain("Hunter2");
      expect(lines).toHaveLength(1);
      expect(lines[0]?.level).toBe("error");
      expect(lines[0]?.fields).toMatchObject({ server_id: "kubernetes-server", error_code: code });
      expect(JSON.stringify(lines)).not.toContain("Hunter2");
    },
  );
});

describe("maskAlertData (fail-open)", () => {
  it("masks with the configured group (security by default)", () => {
    const service = createMaskingService();
    const alert = JSON.stringify({
      alert: "DBDown",
      details: "password=Hunter2-Payments! owner=dba@example.com",
    });
    const result = service.maskAlertData(alert, { enabled: true, pattern_group: "security" });
    expect(result.content).not.toContain("Hunter2-Payments!");
    expect(result.content).not.toContain("dba@example.com");
    expect(result.content).toContain('"alert":"DBDown"');
    expect(result.redactions).toBe(2);
    expect(service.maskAlertData(alert, {})).toEqual(result);
  });

  it("returns the data untouched when disabled", () => {
    const result = createMaskingService().maskAlertData(SECRET_OUTPUT, {
      enabled: false,
      pattern_group: "all",
    });
    expect(result).toEqual({ content: SECRET_OUTPUT, redactions: 0, failed: false });
  });

  it.each([
    { name: "a masker throws", group: "explosive" },
    { name: "the group is unknown", group: "no-such-group" },
  ])("keeps the alert (unmasked) and logs a warning when $name", ({ group }) => {
    const { logger, lines } = recordingLogger();
    const service = createMaskingService({
      logger,
      codeMaskers: [exploding],
      patternGroups: { explosive: ["exploding", "password"] },
    });
    const result = service.maskAlertData(SECRET_OUTPUT, { enabled: true, pattern_group: group });
    expect(result).toEqual({ content: SECRET_OUTPUT, redactions: 0, failed: true });
    expect(lines.map((line) => line.level)).toEqual(["warn"]);
    expect(JSON.stringify(lines)).not.toContain("Hunter2");
  });
});

describe("compile cache", () => {
  it("compiles each distinct config once, however many calls and object copies", () => {
    const service = createMaskingService();
    const custom = [{ name: "ticket", pattern: "TKT-\\d{6}", replacement: "[MASKED_TICKET]" }];
    for (let i = 0; i < 200; i++) {
      const result = service.maskToolResult(
        `TKT-${100000 + i}`,
        basic({ custom_patterns: structuredClone(custom) }),
      );
      expect(result.content).toBe("[MASKED_TICKET]");
    }
    expect(service.cacheStats()).toEqual({ entries: 1, compilations: 1 });

    service.maskToolResult("x", basic({ pattern_groups: ["security"] }));
    service.maskAlertData("x", { enabled: true, pattern_group: "security" });
    service.maskAlertData("y", { enabled: true, pattern_group: "security" });
    expect(service.cacheStats()).toEqual({ entries: 3, compilations: 3 });
  });

  it("remembers a config that failed to compile instead of retrying every call", () => {
    const service = createMaskingService();
    const broken = basic({ custom_patterns: [{ name: "broken", pattern: "(", replacement: "" }] });
    for (let i = 0; i < 20; i++) expect(service.maskToolResult("secret", broken).failed).toBe(true);
    expect(service.cacheStats().compilations).toBe(1);
  });

  it("is bounded, evicting the least recently used config", () => {
    const service = createMaskingService({ maxCachedConfigs: 2 });
    const groups = ["basic", "secrets", "basic", "cloud", "basic"];
    for (const group of groups) service.maskToolResult("x", basic({ pattern_groups: [group] }));
    // basic stays hot; secrets is evicted when cloud arrives.
    expect(service.cacheStats()).toEqual({ entries: 2, compilations: 3 });
    service.maskToolResult("x", basic({ pattern_groups: ["secrets"] }));
    expect(service.cacheStats().compilations).toBe(4);
  });
});

describe("catalog overrides", () => {
  it("lets config replace a built-in pattern and add a group", () => {
    const service = createMaskingService({
      patterns: {
        email: {
          pattern: "[\\w.]+@corp\\.example",
          replacement: "[MASKED_CORP_EMAIL]",
          description: "corp only",
        },
      },
      patternGroups: { people: ["email"] },
    });
    const result = service.maskToolResult(
      "from ann@corp.example to bob@gmail.com",
      basic({ pattern_groups: ["people"] }),
    );
    expect(result.content).toBe("from [MASKED_CORP_EMAIL] to bob@gmail.com");
  });

  it("refuses to start with an invalid configured pattern", () => {
    expect(() =>
      createMaskingService({
        patterns: { bad: { pattern: "[", replacement: "x", description: "" } },
      }),
    ).toThrow(/masking pattern "bad" is invalid/);
  });
});

describe("onRedaction", () => {
  it("tells each pattern's name and count, for tool results and alerts alike", () => {
    const seen: [string, number][] = [];
    const service = createMaskingService({ onRedaction: (p, n) => void seen.push([p, n]) });
    service.maskToolResult(
      "CUSTOM-ABCDEF0123456789 password=hunter22 password=hunter23 nothing else",
      basic({
        custom_patterns: [
          { name: "custom_token", pattern: "CUSTOM-[A-Z0-9]{16}", replacement: "[MASKED_X]" },
        ],
      }),
    );
    expect(seen).toEqual([
      ["secret_assignments", 2],
      ["custom_token", 1],
    ]);
    seen.length = 0;
    service.maskAlertData("password=Hunter2-Payments!", {
      enabled: true,
      pattern_group: "security",
    });
    expect(seen).toEqual([["secret_assignments", 1]]);
    seen.length = 0;
    service.maskToolResult("nothing secret here", basic());
    expect(seen).toEqual([]);
  });
});
