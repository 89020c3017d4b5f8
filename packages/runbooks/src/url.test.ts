import { describe, expect, it } from "vitest";
import { hostAllowed, parseRepoUrl, runbookUrlProblem, toRawContentUrl } from "./url.ts";

const DEFAULT = ["github.com", "raw.githubusercontent.com"];

describe("runbook URLs", () => {
  it("rewrites github.com blob and tree URLs to raw content, leaves others", () => {
    expect(toRawContentUrl("https://github.com/acme/runbooks/blob/main/k8s/oom.md")).toBe(
      "https://raw.githubusercontent.com/acme/runbooks/main/k8s/oom.md",
    );
    expect(toRawContentUrl("https://www.github.com/acme/runbooks/tree/v2/oom.md")).toBe(
      "https://raw.githubusercontent.com/acme/runbooks/v2/oom.md",
    );
    for (const same of [
      "https://raw.githubusercontent.com/acme/runbooks/main/oom.md",
      "https://github.com/acme/runbooks",
      "https://git.internal/acme/runbooks/blob/main/oom.md",
    ]) {
      expect(toRawContentUrl(same)).toBe(same);
    }
  });

  it("allows a listed host or www. + host, nothing else", () => {
    expect(hostAllowed("github.com", DEFAULT)).toBe(true);
    expect(hostAllowed("WWW.GitHub.com.", DEFAULT)).toBe(true);
    expect(hostAllowed("gist.github.com", DEFAULT)).toBe(false);
    expect(hostAllowed("github.com.evil.example", DEFAULT)).toBe(false);
    expect(runbookUrlProblem("https://evil.example/x.md", DEFAULT)).toMatch(
      /host evil\.example is not an allowed runbook domain \(allowed: github\.com, raw\.githubusercontent\.com\)/,
    );
    expect(runbookUrlProblem("ftp://github.com/x.md", DEFAULT)).toMatch(/scheme/);
    expect(runbookUrlProblem("https://github.com/acme/r/blob/main/x.md", DEFAULT)).toBeUndefined();
  });

  it("parses a repository tree URL", () => {
    expect(parseRepoUrl("https://github.com/acme/runbooks/tree/main/sre/k8s")).toEqual({
      owner: "acme",
      repo: "runbooks",
      ref: "main",
      path: "sre/k8s",
    });
    expect(parseRepoUrl("https://github.com/acme/runbooks")).toEqual({
      owner: "acme",
      repo: "runbooks",
      path: "",
    });
    expect(parseRepoUrl("https://github.com/acme/runbooks/blob/main/x.md")).toBeUndefined();
    expect(parseRepoUrl("not a url")).toBeUndefined();
  });
});
