import { describe, expect, it } from "vitest";
import { load, loadIssues } from "./helpers.ts";

describe("defaults.memory", () => {
  it("is off by default, with the Go TARSy's embedding defaults", () => {
    const { config } = load({ tarsy: "" });
    expect(config.defaults.memory).toEqual({
      enabled: false,
      max_inject: 5,
      reflector_memory_limit: 20,
      embedding: {
        provider: "google",
        model: "gemini-embedding-2-preview",
        api_key_env: "GOOGLE_API_KEY",
        dimensions: 768,
      },
    });
  });

  it("reads the Go TARSy's keys; what is not set keeps its default", () => {
    const { config, warnings } = load({
      tarsy: `
defaults:
  memory:
    enabled: true
    max_inject: 3
    embedding:
      provider: openai
      model: text-embedding-3-small
      api_key_env: OPENAI_API_KEY
      base_url: http://127.0.0.1:9999/v1
`,
    });
    expect(warnings.filter((w) => w.path.startsWith("defaults"))).toEqual([]);
    expect(config.defaults.memory).toEqual({
      enabled: true,
      max_inject: 3,
      reflector_memory_limit: 20,
      embedding: {
        provider: "openai",
        model: "text-embedding-3-small",
        api_key_env: "OPENAI_API_KEY",
        dimensions: 768,
        base_url: "http://127.0.0.1:9999/v1",
      },
    });
  });

  it("names the path of every bad value", () => {
    const issues = loadIssues({
      tarsy: `
defaults:
  memory:
    enabled: yes please
    max_inject: 0
    embedding: { provider: cohere, dimensions: 0, base_url: "not a url" }
`,
    });
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        "defaults.memory.embedding.base_url",
        "defaults.memory.embedding.dimensions",
        "defaults.memory.embedding.provider",
        "defaults.memory.enabled",
        "defaults.memory.max_inject",
      ].sort(),
    );
    expect(issues.every((i) => i.file === "tarsy.yaml")).toBe(true);
  });
});
