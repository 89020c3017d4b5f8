import { describe, expect, it } from "vitest";
import { childEnvironment } from "./env.ts";

describe("childEnvironment", () => {
  it("passes the stack's own environment on, PATH included", () => {
    const env = childEnvironment();
    expect(env.PATH).toBeTruthy();
    expect(env.PATH).toBe(process.env.PATH);
    expect(Object.keys(env).sort()).toEqual(Object.keys(process.env).sort());
  });

  it("lets the child's own variables win over inherited ones", () => {
    const env = childEnvironment({ PATH: "/only/here", LC_MESSAGES: "C" });
    expect(env.PATH).toBe("/only/here");
    expect(env.LC_MESSAGES).toBe("C");
    expect(env.HOME).toBe(process.env.HOME);
  });

  it("hands each child a copy: what one child sets reaches neither the stack nor the next", () => {
    const own = "TARSY_STACK_TEST_CHILD_ONLY";
    const set = "TARSY_STACK_TEST_SET_BY_CHILD";
    const first = childEnvironment({ [own]: "runner-1" });
    first[set] = "x";
    expect(first[own]).toBe("runner-1");
    expect(process.env[own]).toBeUndefined();
    expect(process.env[set]).toBeUndefined();
    expect(childEnvironment()[own]).toBeUndefined();
  });
});
