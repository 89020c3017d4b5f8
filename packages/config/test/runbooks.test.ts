import { describe, expect, it } from "vitest";
import { load, loadIssues } from "./helpers.ts";

describe("system.github and system.runbooks", () => {
  it("default to GITHUB_TOKEN, api.github.com, no listing, 1m and the GitHub hosts", () => {
    const { config, warnings } = load({});
    expect(config.system.github).toEqual({
      token_env: "GITHUB_TOKEN",
      api_url: "https://api.github.com",
    });
    expect(config.system.runbooks).toEqual({
      repo_url: "",
      cache_ttl_ms: 60_000,
      allowed_domains: ["github.com", "raw.githubusercontent.com"],
      allow_private_addresses: false,
    });
    expect(warnings.filter((w) => /github|runbooks/.test(w.message))).toEqual([]);
  });

  it("are read from tarsy.yaml, with the repository URL interpolated", () => {
    const { config, warnings } = load(
      {
        tarsy: `
system:
  github:
    token_env: RUNBOOK_TOKEN
    api_url: "https://ghe.example.com/api/v3"
  runbooks:
    repo_url: "{{.RUNBOOK_REPO}}/tree/main/sre"
    cache_ttl: 5m
    allowed_domains: [GitHub.com, ghe.example.com]
    allow_private_addresses: true
defaults:
  runbook: "Inline fallback"
`,
      },
      { RUNBOOK_REPO: "https://github.com/acme/runbooks", GOOGLE_API_KEY: "k" },
    );
    expect(warnings).toEqual([]);
    expect(config.system.github).toEqual({
      token_env: "RUNBOOK_TOKEN",
      api_url: "https://ghe.example.com/api/v3",
    });
    expect(config.system.runbooks).toEqual({
      repo_url: "https://github.com/acme/runbooks/tree/main/sre",
      cache_ttl_ms: 300_000,
      allowed_domains: ["github.com", "ghe.example.com"],
      allow_private_addresses: true,
    });
    expect(config.defaults.runbook).toBe("Inline fallback");
  });

  it("refuse a zero cache_ttl, a non-tree repo_url, a URL as a domain and a bad api_url", () => {
    const issues = loadIssues({
      tarsy: `
system:
  github:
    api_url: "ftp://api.example.com"
  runbooks:
    repo_url: "https://github.com/acme/runbooks/blob/main/x.md"
    cache_ttl: 0
    allowed_domains: ["https://github.com/"]
`,
    });
    const paths = issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "system.github.api_url",
        "system.runbooks.repo_url",
        "system.runbooks.cache_ttl",
        "system.runbooks.allowed_domains[0]",
      ]),
    );
    expect(issues.find((i) => i.path === "system.runbooks.cache_ttl")?.message).toMatch(
      /greater than 0/,
    );
    expect(issues.find((i) => i.path === "system.runbooks.repo_url")?.message).toMatch(/tree URL/);
  });

  it("an unset repository variable means no listing, with a warning", () => {
    const { config, warnings } = load({
      tarsy: `
system:
  runbooks:
    repo_url: "{{.NOT_SET}}"
`,
    });
    expect(config.system.runbooks.repo_url).toBe("");
    expect(warnings.map((w) => w.path)).toContain("system.runbooks.repo_url");
  });
});
