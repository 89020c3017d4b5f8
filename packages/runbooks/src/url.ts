import { unsafeUrlReason } from "@tarsy/contracts";

/**
 * Runbook URLs: the host allowlist, GitHub's blob/tree → raw content rewrite and the parts of
 * a repository tree URL (for listing).
 */

const GITHUB_WEB_HOSTS = new Set(["github.com", "www.github.com"]);
export const RAW_CONTENT_ORIGIN = "https://raw.githubusercontent.com";

const normalizeHost = (host: string) => host.toLowerCase().replace(/\.$/, "");

/** A host is allowed when it is an allowlisted domain or `www.` + one. */
export function hostAllowed(host: string, allowedDomains: readonly string[]): boolean {
  const h = normalizeHost(host);
  return allowedDomains.some((domain) => {
    const d = normalizeHost(domain);
    return h === d || h === `www.${d}`;
  });
}

/** Why TARSy will not fetch `text` as a runbook, or undefined when it may. */
export function runbookUrlProblem(
  text: string,
  allowedDomains: readonly string[],
): string | undefined {
  const unsafe = unsafeUrlReason(text);
  if (unsafe) return unsafe;
  const host = new URL(text).hostname;
  if (!hostAllowed(host, allowedDomains)) {
    const allowed = allowedDomains.length > 0 ? allowedDomains.join(", ") : "none";
    return `host ${host} is not an allowed runbook domain (allowed: ${allowed})`;
  }
  return undefined;
}

/**
 * `github.com/{owner}/{repo}/blob|tree/{ref}/{path}` → the raw content URL
 * (`raw.githubusercontent.com/{owner}/{repo}/{ref}/{path}`); any other URL as given.
 */
export function toRawContentUrl(text: string): string {
  const url = new URL(text);
  if (!GITHUB_WEB_HOSTS.has(normalizeHost(url.hostname))) return text;
  const parts = url.pathname.split("/").filter(Boolean);
  const [owner, repo, kind, ref, ...path] = parts;
  if (!owner || !repo || (kind !== "blob" && kind !== "tree") || !ref || path.length === 0) {
    return text;
  }
  return `${RAW_CONTENT_ORIGIN}/${owner}/${repo}/${ref}/${path.join("/")}`;
}

export interface RepoLocation {
  owner: string;
  repo: string;
  /** Absent: the repository's default branch. */
  ref?: string;
  /** Directory inside the repository ("" for its root). */
  path: string;
}

/**
 * The parts of a repository tree URL: `https://github.com/{owner}/{repo}/tree/{ref}/{path}`
 * (or just `/{owner}/{repo}`). Only the path matters, so a GitHub Enterprise or test host
 * works as well. Undefined when the path has no such shape.
 */
export function parseRepoUrl(text: string): RepoLocation | undefined {
  if (!URL.canParse(text)) return undefined;
  const parts = new URL(text).pathname
    .split("/")
    .filter(Boolean)
    .map((p) => decodeURIComponent(p));
  const [owner, repo, kind, ref, ...path] = parts;
  if (!owner || !repo) return undefined;
  if (kind === undefined) return { owner, repo, path: "" };
  if (kind !== "tree" || !ref) return undefined;
  return { owner, repo, ref, path: path.join("/") };
}
