import { describe, expect, it } from "vitest";
import { freePort } from "../src/infra.ts";

describe("freePort", () => {
  // A stack hands out every port before its services bind them. The kernel often offers a
  // port it just saw released again (about one call in ten here), which gave two services the
  // same port and failed the start with EADDRINUSE.
  it("never hands out the same port twice in one process", async () => {
    const ports: number[] = [];
    for (let i = 0; i < 500; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });
});
