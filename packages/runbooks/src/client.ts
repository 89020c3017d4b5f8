import { abortable } from "@tarsy/runtime";
import { TtlCache } from "./cache.ts";
import { RunbookError } from "./errors.ts";
import { guardedGet } from "./http.ts";
import { listMarkdownFiles } from "./listing.ts";
import { type RunbookSettingsInput, RunbookSettingsSchema } from "./settings.ts";
import { parseRepoUrl, RAW_CONTENT_ORIGIN, runbookUrlProblem, toRawContentUrl } from "./url.ts";

export interface RunbookClient {
  /** Why `url` may not be used as a runbook (scheme, credentials, host allowlist), or undefined. */
  problem(url: string): string | undefined;
  /** The runbook's text (cached for the TTL); a RunbookError when it cannot be had. */
  fetch(url: string, signal?: AbortSignal): Promise<string>;
  /** Blob URLs of the `.md` files under `repo_url` (cached); [] when no repository is set. */
  list(signal?: AbortSignal): Promise<string[]>;
  /** Whether `repo_url` is set, and whether a GitHub token is. */
  readonly repoConfigured: boolean;
  readonly tokenConfigured: boolean;
}

export interface RunbookClientOptions {
  /** Clock of the caches (tests). */
  now?: () => number;
  /** A listing subdirectory that failed and was skipped. */
  onSkipped?(path: string, err: unknown): void;
}

/** Fetches and lists runbooks as `system.runbooks` / `system.github` configure it. */
export function createRunbookClient(
  input: RunbookSettingsInput,
  options: RunbookClientOptions = {},
): RunbookClient {
  const settings = RunbookSettingsSchema.parse(input);
  const apiHost = new URL(settings.githubApiUrl).hostname;
  const rawHost = new URL(RAW_CONTENT_ORIGIN).hostname;
  const common = {
    allowPrivateAddresses: settings.allowPrivateAddresses,
    tokenHosts: ["github.com", rawHost, apiHost],
    timeoutMs: settings.timeoutMs,
    maxBytes: settings.maxBytes,
    maxRedirects: settings.maxRedirects,
    ...(settings.token ? { token: settings.token } : {}),
  };
  const contents = new TtlCache<string>(settings.cacheTtlMs, options.now);
  const listings = new TtlCache<string[]>(settings.cacheTtlMs, options.now);
  const repo = settings.repoUrl ? parseRepoUrl(settings.repoUrl) : undefined;

  return {
    repoConfigured: repo !== undefined,
    tokenConfigured: settings.token !== undefined,

    problem: (url) => runbookUrlProblem(url, settings.allowedDomains),

    async fetch(url, signal) {
      const problem = runbookUrlProblem(url, settings.allowedDomains);
      if (problem) throw new RunbookError("url_not_allowed", `${url}: ${problem}`);
      const raw = toRawContentUrl(url);
      // The raw content host is allowed whenever github.com is (the rewrite goes there).
      const allowedHosts =
        raw === url ? settings.allowedDomains : [...settings.allowedDomains, rawHost];
      // The shared load has only its own deadline: one caller's cancel must not fail the others.
      const load = () =>
        guardedGet(raw, {
          ...common,
          allowedHosts,
          accept: "text/markdown, text/plain;q=0.9, */*;q=0.5",
        });
      return abortable(contents.get(raw, load), signal);
    },

    async list(signal) {
      if (!repo) return [];
      const get = (url: string) =>
        guardedGet(url, {
          ...common,
          allowedHosts: [apiHost],
          accept: "application/vnd.github+json",
        });
      const load = () =>
        listMarkdownFiles(
          {
            apiUrl: settings.githubApiUrl,
            get,
            ...(options.onSkipped ? { onSkipped: options.onSkipped } : {}),
          },
          repo,
        );
      return abortable(listings.get(settings.repoUrl, load), signal);
    },
  };
}
