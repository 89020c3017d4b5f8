import { Agent, fetch } from "undici";
import { checkLiteralHost, guardedLookup } from "./address.ts";
import { findRunbookError, RunbookError } from "./errors.ts";
import { hostAllowed } from "./url.ts";

/**
 * One GET as runbook fetching and listing make it: every hop (redirects are followed by hand)
 * must be http(s), on an allowed host and at an allowed address; the token goes only to the
 * hosts trusted with it; the whole exchange has a deadline and the body a size cap.
 */

export interface GuardedGetOptions {
  allowedHosts: readonly string[];
  allowPrivateAddresses: boolean;
  /** Sent as `Authorization: Bearer` to the hosts in `tokenHosts` only. */
  token?: string;
  tokenHosts: readonly string[];
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  accept: string;
  signal?: AbortSignal;
}

const agents = new Map<boolean, Agent>();

/** One connection pool per address policy, each resolving names through the guard. */
function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(allowPrivate) } });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

function checkHop(url: URL, options: GuardedGetOptions, hop: number): void {
  const what = hop === 0 ? url.href : `redirect to ${url.href}`;
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RunbookError(
      hop === 0 ? "url_not_allowed" : "redirect_refused",
      `${what}: only http and https are allowed`,
    );
  }
  if (!hostAllowed(url.hostname, options.allowedHosts)) {
    throw new RunbookError(
      hop === 0 ? "url_not_allowed" : "redirect_refused",
      `${what}: host ${url.hostname} is not allowed`,
    );
  }
  checkLiteralHost(url.hostname, options.allowPrivateAddresses);
}

async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number) {
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await body.cancel().catch(() => {});
      throw new RunbookError("too_large", `the response is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The body of a 200 answer to GET `target`; anything else is a RunbookError. */
export async function guardedGet(target: string, options: GuardedGetOptions): Promise<string> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let url = new URL(target);
  try {
    for (let hop = 0; hop <= options.maxRedirects; hop++) {
      checkHop(url, options, hop);
      const headers: Record<string, string> = { accept: options.accept };
      if (options.token && hostAllowed(url.hostname, options.tokenHosts)) {
        headers.authorization = `Bearer ${options.token}`;
      }
      const response = await fetch(url, {
        headers,
        redirect: "manual",
        signal,
        dispatcher: agentFor(options.allowPrivateAddresses),
      });
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => {});
        url = new URL(location, url);
        continue;
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {});
        throw new RunbookError("http_status", `GET ${url.href} answered ${response.status}`);
      }
      const length = Number(response.headers.get("content-length") ?? Number.NaN);
      if (length > options.maxBytes) {
        await response.body?.cancel().catch(() => {});
        throw new RunbookError(
          "too_large",
          `the response is ${length} bytes; at most ${options.maxBytes}`,
        );
      }
      return await readCapped(response.body, options.maxBytes);
    }
    throw new RunbookError("too_many_redirects", `more than ${options.maxRedirects} redirects`);
  } catch (err) {
    // The caller's own abort (cancel, shutdown) is passed on as it is.
    if (options.signal?.aborted) throw options.signal.reason;
    const known = findRunbookError(err);
    if (known) throw known;
    if (deadline.aborted) {
      throw new RunbookError("timeout", `GET ${url.href} took longer than ${options.timeoutMs} ms`);
    }
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new RunbookError("network", `GET ${url.href} failed: ${message}`, { cause: err });
  }
}
