import { type LookupAddress, lookup } from "node:dns";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { RunbookError } from "./errors.ts";

/**
 * Where a runbook fetch may connect. Public unicast addresses always; private, loopback and
 * shared (CGNAT, unique-local) ranges only with `allowPrivate`; link-local never, because
 * that is where cloud metadata services hand out credentials.
 */

const PRIVATE_RANGES = new Set(["private", "loopback", "uniqueLocal", "carrierGradeNat"]);

function rangeOf(address: string): string {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
  }
  return parsed.range();
}

/** Why connecting to `address` is refused, or undefined when it is allowed. */
export function refusedAddressReason(address: string, allowPrivate: boolean): string | undefined {
  const range = rangeOf(address);
  if (range === "unicast") return undefined;
  if (allowPrivate && PRIVATE_RANGES.has(range)) return undefined;
  return `address ${address} is in the ${range} range`;
}

/** An IP literal host (`127.0.0.1`, `[::1]`) is checked here; names are checked at lookup. */
export function checkLiteralHost(hostname: string, allowPrivate: boolean): void {
  const host = hostname.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(host)) return;
  const reason = refusedAddressReason(host, allowPrivate);
  if (reason) throw new RunbookError("address_not_allowed", `${hostname}: ${reason}`);
}

/**
 * A `lookup` for sockets that refuses names resolving to a refused address. It runs as the
 * connection is made, so the address checked is the address connected to (no DNS rebinding
 * between a check and the fetch).
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) {
        callback(err, "", 0);
        return;
      }
      for (const a of addresses) {
        const reason = refusedAddressReason(a.address, allowPrivate);
        if (reason) {
          callback(new RunbookError("address_not_allowed", `${hostname}: ${reason}`), "", 0);
          return;
        }
      }
      const first = addresses[0];
      if (!first) {
        callback(
          Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }),
          "",
          0,
        );
        return;
      }
      // net asks for every address when it races IPv4 and IPv6 (autoSelectFamily).
      if (options.all)
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
