import { describe, expect, it } from "vitest";
import { refusedAddressReason } from "./address.ts";

describe("address ranges", () => {
  it("allows public unicast addresses", () => {
    expect(refusedAddressReason("140.82.121.4", false)).toBeUndefined();
    expect(refusedAddressReason("2606:50c0:8000::154", false)).toBeUndefined();
  });

  it("refuses private, loopback and shared ranges unless allowed", () => {
    for (const address of [
      "10.1.2.3",
      "192.168.0.7",
      "172.16.4.4",
      "127.0.0.1",
      "::1",
      "100.64.0.1",
      "fd00::1",
      "::ffff:127.0.0.1",
    ]) {
      expect(refusedAddressReason(address, false), address).toMatch(/range/);
      expect(refusedAddressReason(address, true), address).toBeUndefined();
    }
  });

  it("refuses link-local (cloud metadata) and unspecified addresses even when private ones are allowed", () => {
    for (const address of ["169.254.169.254", "fe80::1", "0.0.0.0", "::ffff:169.254.169.254"]) {
      expect(refusedAddressReason(address, true), address).toMatch(/range/);
    }
  });
});
