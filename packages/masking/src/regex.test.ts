import { describe, expect, it } from "vitest";
import {
  BUILTIN_CODE_MASKERS,
  BUILTIN_MASKING_PATTERNS,
  BUILTIN_PATTERN_GROUPS,
  BUILTIN_PATTERN_PREFILTERS,
} from "./builtin-patterns.ts";
import { InvalidPatternError } from "./errors.ts";
import { compilePattern, translatePattern, validateCustomPattern } from "./regex.ts";

describe("pattern dialect", () => {
  it.each([
    { source: "(?i)token", expected: { source: "token", flags: "i" } },
    { source: "(?si)a.b", expected: { source: "a.b", flags: "is" } },
    { source: "(?P<user>\\w+)@", expected: { source: "(?<user>\\w+)@", flags: "" } },
    { source: "plain", expected: { source: "plain", flags: "" } },
  ])("translates $source", ({ source, expected }) => {
    expect(translatePattern(source)).toEqual(expected);
  });

  it.each([
    { replacement: "$1=[MASKED]", expected: "user=[MASKED] rest" },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Go-style ${1} group reference under test
    { replacement: "${1}=[MASKED]", expected: "user=[MASKED] rest" },
    { replacement: "$<key>=[MASKED]", expected: "user=[MASKED] rest" },
    { replacement: "[$&]", expected: "[user=hunter22] rest" },
    { replacement: "$$1", expected: "$1 rest" },
  ])("expands replacement $replacement", ({ replacement, expected }) => {
    const pattern = compilePattern("kv", "(?<key>user)=(\\w+)", replacement);
    expect(pattern.apply("user=hunter22 rest")).toEqual({ text: expected, count: 1 });
  });
});

describe("validateCustomPattern", () => {
  it("accepts TARSy's documented example", () => {
    expect(() =>
      validateCustomPattern({
        name: "custom_token",
        pattern: "CUSTOM-[A-Z0-9]{16}",
        replacement: "[MASKED_CUSTOM_TOKEN]",
      }),
    ).not.toThrow();
  });

  it.each([
    { why: "does not compile", pattern: "([a-z", replacement: "x" },
    { why: "matches the empty string", pattern: "a*", replacement: "x" },
    { why: "uses an unsupported inline flag", pattern: "(?U)a+", replacement: "x" },
    { why: "refers to a missing group", pattern: "(a)b", replacement: "$2" },
    { why: "refers to a missing named group", pattern: "(a)b", replacement: "$<nope>" },
  ])("rejects a pattern that $why", ({ pattern, replacement }) => {
    const attempt = () => validateCustomPattern({ name: "bad", pattern, replacement });
    expect(attempt).toThrow(InvalidPatternError);
    try {
      attempt();
    } catch (error) {
      expect((error as InvalidPatternError).code).toBe("masking_invalid_pattern");
      expect((error as InvalidPatternError).patternName).toBe("bad");
    }
  });
});

/** One real-looking sample per built-in: the secret part must go, the label must appear. */
const SAMPLES: Record<string, { input: string; secret: string }> = {
  pem_private_key: {
    input:
      "key.pem:\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIOb1xQn0bA9\n-----END EC PRIVATE KEY-----\n",
    secret: "MHcCAQEEIOb1xQn0bA9",
  },
  certificate: {
    input:
      "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq\n-----END CERTIFICATE-----",
    secret: "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq",
  },
  ssh_key: {
    input:
      "authorized: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@bastion",
    secret: "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
  },
  certificate_authority_data: {
    input: "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
    secret: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
  },
  kubeconfig_client_credentials: {
    input: "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ==",
    secret: "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ==",
  },
  jwt: {
    input: "id_token=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJib2IifQ.c2lnbmF0dXJlLWJ5dGVz",
    secret: "eyJzdWIiOiJib2IifQ",
  },
  github_token: {
    input: "GITHUB=ghp_R8vN2kQw7ZtY4mPx9LcB3sHf6JdA1eUo0iKq",
    secret: "ghp_R8vN2kQw7ZtY4mPx9LcB3sHf6JdA1eUo0iKq",
  },
  slack_token: {
    input: "webhook via xoxb-2048-4096-AbCdEfGhIjKlMnOp",
    secret: "xoxb-2048-4096-AbCdEfGhIjKlMnOp",
  },
  slack_webhook: {
    input:
      "alerts go to https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/XyZ123abcDEF456ghiJKL789 daily",
    secret: "XyZ123abcDEF456ghiJKL789",
  },
  gitlab_token: {
    input: "CI_JOB: glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm used for clone",
    secret: "glpat-Zx9Yw8Vu7Ts6Rq5Po4Nm",
  },
  google_oauth: {
    input:
      "oauth client 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 and access ya29.a0AfH6SMBx7Yz-Q9wErTyUiOp1234567890abc",
    secret: "ya29.a0AfH6SMBx7Yz-Q9wErTyUiOp1234567890abc",
  },
  provider_api_key: {
    input: "llm call with sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 failed",
    secret: "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
  },
  azure_sas_signature: {
    input:
      "GET https://acct.blob.core.windows.net/logs/a.txt?sv=2022-11-02&se=2026-12-01&sr=b&sp=r&sig=Zk9vYmFy%2BYmF6cXV4Zm9vYmFy%3D 200",
    secret: "Zk9vYmFy%2BYmF6cXV4Zm9vYmFy%3D",
  },
  gcp_api_key: {
    input: "maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY used",
    secret: "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
  },
  gcp_service_account_key: {
    input:
      '{"type": "service_account", "private_key_id": "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c"}',
    secret: "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c",
  },
  aws_access_key: {
    input: "Credentials: AKIAIOSFODNN7EXAMPLE (user deploy)",
    secret: "AKIAIOSFODNN7EXAMPLE",
  },
  aws_secret_key: {
    input: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  },
  azure_storage_key: {
    input:
      "DefaultEndpointsProtocol=https;AccountName=logs;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==;EndpointSuffix=core.windows.net",
    secret: "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4==",
  },
  client_secret: {
    input: "client_secret: Q~x8Q~abcDEF123ghiJKL456",
    secret: "Q~x8Q~abcDEF123ghiJKL456",
  },
  url_credentials: {
    input: "DATABASE_URL=mysql://orders:Tr0ub4dor&3@mysql-0:3306/orders",
    secret: "Tr0ub4dor&3",
  },
  kubernetes_env_secret: {
    input: '{"name": "SIGNING_KEY", "value": "a very long signing phrase"}',
    secret: "a very long signing phrase",
  },
  bearer_token: {
    input: "curl -H 'Authorization: Bearer 3f9a7c2e1d4b6a8f0e2c4a6b8d0f2e4a' https://api",
    secret: "3f9a7c2e1d4b6a8f0e2c4a6b8d0f2e4a",
  },
  private_key: {
    input: "private_key = 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
    secret: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
  },
  secret_key: {
    input: '"secret_key": "b94d27b9934d3e08a52e52d7da7dabfac484efe3"',
    secret: "b94d27b9934d3e08a52e52d7da7dabfac484efe3",
  },
  api_key: {
    input: "api_key: sk-proj-4f9c2a7b1e3d5f7a9c1e3d5f",
    secret: "sk-proj-4f9c2a7b1e3d5f7a9c1e3d5f",
  },
  password: { input: "Server=db;User Id=sa;Password=P@ssw0rd!2024;", secret: "P@ssw0rd!2024" },
  token: {
    input: "kubectl get pods --token=sha256~Xq3vB7nM2kLp9RtY",
    secret: "sha256~Xq3vB7nM2kLp9RtY",
  },
  email: { input: "paged oncall-sre@example.com at 03:00", secret: "oncall-sre@example.com" },
  base64_short: { input: "pin: MTIzNA==\n", secret: "MTIzNA==" },
  base64_secret: {
    input: "blob c2VjcmV0LXRoYXQtaXMtbG9uZy1lbm91Z2g= end",
    secret: "c2VjcmV0LXRoYXQtaXMtbG9uZy1lbm91Z2g=",
  },
};

describe("built-in patterns", () => {
  it("have a sample here for every pattern", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(Object.keys(BUILTIN_MASKING_PATTERNS).sort());
  });

  it.each(Object.entries(BUILTIN_MASKING_PATTERNS))("%s masks its sample", (name, definition) => {
    const sample = SAMPLES[name];
    if (!sample) throw new Error(`no sample for ${name}`);
    const label = /\[MASKED_[A-Z0-9_]+\]/.exec(definition.replacement)?.[0];
    expect(label).toBeDefined();
    expect(sample.input).toContain(sample.secret);
    const result = compilePattern(name, definition.pattern, definition.replacement).apply(
      sample.input,
    );
    expect(result.text).not.toContain(sample.secret);
    expect(result.text).toContain(label);
    expect(result.count).toBeGreaterThanOrEqual(1);
    // Masking is idempotent: the marker itself is never masked again.
    const again = compilePattern(name, definition.pattern, definition.replacement).apply(
      result.text,
    );
    expect(again).toEqual({ text: result.text, count: 0 });
  });

  it.each(Object.entries(BUILTIN_PATTERN_PREFILTERS))(
    "%s: its prefilter is in every match, so skipping on it never hides a secret",
    (name, prefilter) => {
      const definition = BUILTIN_MASKING_PATTERNS[name];
      const sample = SAMPLES[name];
      if (!definition || !sample) throw new Error(`unknown pattern ${name}`);
      expect(definition.pattern.startsWith("(?i)")).toBe(false);
      const matches = [
        ...sample.input.matchAll(compilePattern(name, definition.pattern, "x").regex),
      ];
      expect(matches.length).toBeGreaterThan(0);
      for (const match of matches) {
        if (typeof prefilter === "string") expect(match[0]).toContain(prefilter);
        else expect(match[0]).toMatch(prefilter);
      }
    },
  );

  it("groups name only known patterns and code maskers", () => {
    expect(Object.keys(BUILTIN_PATTERN_GROUPS).sort()).toEqual(
      ["all", "basic", "cloud", "kubernetes", "secrets", "security"].sort(),
    );
    for (const members of Object.values(BUILTIN_PATTERN_GROUPS)) {
      for (const member of members) {
        expect(member in BUILTIN_MASKING_PATTERNS || BUILTIN_CODE_MASKERS.includes(member)).toBe(
          true,
        );
      }
    }
    expect(BUILTIN_PATTERN_GROUPS.kubernetes).toContain("kubernetes_secret");
    expect(BUILTIN_PATTERN_GROUPS.all).toEqual(
      expect.arrayContaining(["kubernetes_secret", ...Object.keys(BUILTIN_MASKING_PATTERNS)]),
    );
  });
});
