import { z } from "zod";

/**
 * Which URLs TARSy may be asked to fetch (runbooks): http(s) only, no credentials in the
 * URL, and never a link-local address or a cloud metadata host (169.254.169.254 and
 * friends hand out instance credentials). Private and loopback addresses stay allowed:
 * runbooks often live on an internal Git server.
 */

const METADATA_HOSTS = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
]);

/** 169.254.0.0/16 (IPv4 link-local, where cloud metadata services answer). */
function isLinkLocalV4(host: string): boolean {
  return /^169\.254\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** fe80::/10, and IPv4-mapped / NAT64 forms of 169.254.0.0/16. */
function isLinkLocalV6(host: string): boolean {
  if (!host.startsWith("[") || !host.endsWith("]")) return false;
  const addr = host.slice(1, -1).toLowerCase();
  if (/^fe[89ab][0-9a-f]?:/.test(addr)) return true;
  // The URL parser writes ::ffff:169.254.1.1 as ::ffff:a9fe:101.
  return /^(::ffff:|64:ff9b::)(a9fe:[0-9a-f]{1,4}|169\.254\.)/.test(addr);
}

/** Why `text` is not an acceptable URL to fetch, or undefined when it is. */
export function unsafeUrlReason(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "not a valid URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `scheme ${url.protocol} is not allowed; use http or https`;
  }
  if (url.username || url.password) return "credentials in the URL are not allowed";
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host === "") return "the URL has no host";
  if (isLinkLocalV4(host) || isLinkLocalV6(host)) return "link-local addresses are not allowed";
  if (METADATA_HOSTS.has(host)) return "cloud metadata hosts are not allowed";
  return undefined;
}

/** An http(s) URL TARSy may fetch (see {@link unsafeUrlReason}); at most 2048 characters. */
export const FetchableUrlSchema = z
  .string()
  .max(2048)
  .superRefine((text, ctx) => {
    const reason = unsafeUrlReason(text);
    if (reason) ctx.addIssue({ code: "custom", message: reason });
  });
