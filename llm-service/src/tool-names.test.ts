import { describe, expect, it } from "vitest";
import { ConfigError } from "./errors.ts";
import { createToolNameMap, toProviderToolName } from "./tool-names.ts";

describe("tool name mapping", () => {
  it("maps server.tool to server__tool and back exactly, including dashes and extra dots", () => {
    const names = createToolNameMap(["kubernetes-server.pods_list", "argo.v1.sync"]);
    expect(toProviderToolName("kubernetes-server.pods_list")).toBe("kubernetes-server__pods_list");
    expect(names.toCanonical("kubernetes-server__pods_list")).toBe("kubernetes-server.pods_list");
    expect(names.toCanonical(names.toProvider("argo.v1.sync"))).toBe("argo.v1.sync");
  });

  it("falls back to the first separator for a name it was not given", () => {
    expect(createToolNameMap([]).toCanonical("github__list_prs")).toBe("github.list_prs");
  });

  it("rejects two tools that would collide on the provider side", () => {
    expect(() => createToolNameMap(["a.b", "a__b"])).toThrow(ConfigError);
  });
});
