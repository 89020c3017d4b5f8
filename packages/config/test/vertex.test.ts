import { describe, expect, it } from "vitest";
import { builtinLlmProviders } from "../src/index.ts";
import { load, loadIssues, withoutLines } from "./helpers.ts";

const VERTEX_PROVIDERS = `
llm_providers:
  vertex-claude:
    type: vertexai
    model: claude-sonnet-4-5@20250929
    credentials_env: VERTEX_SA
    project_env: GCP_PROJECT
    location_env: GCP_LOCATION
  vertex-gemini:
    type: vertexai
    model: gemini-2.5-pro
    credentials_env: VERTEX_SA
    project_env: GCP_PROJECT
    location_env: GCP_LOCATION
`;
const ALL_SET = { VERTEX_SA: "/secrets/sa.json", GCP_PROJECT: "p", GCP_LOCATION: "us-east5" };

describe("Vertex AI providers: credentials_env, project_env, location_env", () => {
  it("keeps the three variable names (never their values) on the provider", () => {
    const { config, warnings } = load(
      { providers: VERTEX_PROVIDERS, tarsy: "defaults:\n  llm_provider: vertex-claude\n" },
      ALL_SET,
    );
    expect(config.llmProviders.get("vertex-claude")).toMatchObject({
      type: "vertexai",
      credentials_env: "VERTEX_SA",
      project_env: "GCP_PROJECT",
      location_env: "GCP_LOCATION",
    });
    expect(config.llmProviders.get("vertex-claude")?.api_key_env).toBeUndefined();
    expect(warnings.map((w) => w.message).join("\n")).not.toContain("credentials_env");
  });

  it("rejects a provider in use whose variables are not set, one error per variable", () => {
    const issues = withoutLines(
      loadIssues({
        providers: VERTEX_PROVIDERS,
        tarsy: "defaults:\n  llm_provider: vertex-claude\n",
      }),
    );
    expect(issues).toEqual(
      ["credentials_env", "project_env", "location_env"].map((field) => ({
        file: "llm-providers.yaml",
        path: `llm_providers.vertex-claude.${field}`,
        message: expect.stringMatching(
          new RegExp(
            `^environment variable ${{ credentials_env: "VERTEX_SA", project_env: "GCP_PROJECT", location_env: "GCP_LOCATION" }[field]} is not set`,
          ),
        ),
      })),
    );
  });

  it("checks providers used by a stage agent, not only the default", () => {
    const issues = loadIssues(
      {
        providers: VERTEX_PROVIDERS,
        tarsy: `
agent_chains:
  c:
    alert_types: [c]
    stages:
      - name: s
        agents:
          - name: KubernetesAgent
            llm_provider: vertex-gemini
`,
      },
      { VERTEX_SA: "/secrets/sa.json", GCP_PROJECT: "p" },
    );
    expect(issues).toEqual([
      expect.objectContaining({
        path: "llm_providers.vertex-gemini.location_env",
        message: expect.stringContaining("GCP_LOCATION"),
      }),
    ]);
  });

  it("does not check providers nobody uses", () => {
    expect(() => load({ providers: VERTEX_PROVIDERS })).not.toThrow();
  });

  it("the built-in vertexai-default: Claude on Vertex from GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION", () => {
    const builtin = builtinLlmProviders().find((p) => p.name === "vertexai-default");
    expect(builtin).toMatchObject({
      type: "vertexai",
      project_env: "GOOGLE_CLOUD_PROJECT",
      location_env: "GOOGLE_CLOUD_LOCATION",
    });
    expect(builtin?.model).toMatch(/^claude-/);
    expect(builtin?.api_key_env).toBeUndefined();

    const tarsy = "defaults:\n  llm_provider: vertexai-default\n";
    const { config } = load(
      { tarsy },
      { GOOGLE_CLOUD_PROJECT: "ops", GOOGLE_CLOUD_LOCATION: "us-east5" },
    );
    expect(config.defaults.llm_provider).toBe("vertexai-default");
    expect(loadIssues({ tarsy }, { GOOGLE_CLOUD_LOCATION: "us-east5" })).toEqual([
      expect.objectContaining({
        file: "<built-in>",
        path: "llm_providers.vertexai-default.project_env",
        message: expect.stringContaining("GOOGLE_CLOUD_PROJECT is not set"),
      }),
    ]);
  });

  it("rejects the google-native backend for a Claude model on Vertex AI", () => {
    const issues = loadIssues(
      {
        providers: VERTEX_PROVIDERS,
        tarsy: `
agent_chains:
  c:
    alert_types: [c]
    stages:
      - name: s
        agents:
          - name: KubernetesAgent
            llm_provider: vertex-claude
            llm_backend: google-native
          - name: KubernetesAgent
            llm_provider: vertex-gemini
            llm_backend: google-native
`,
      },
      ALL_SET,
    );
    expect(issues).toEqual([
      expect.objectContaining({
        path: "agent_chains.c.stages[0].agents[0]",
        message: expect.stringContaining(
          'llm_backend "google-native" cannot run LLM provider "vertex-claude"',
        ),
      }),
    ]);
  });

  it("still rejects unknown provider types and unknown providers", () => {
    const issues = loadIssues({
      providers: "llm_providers:\n  v:\n    type: vertex\n    model: m\n",
      tarsy: "defaults:\n  llm_provider: nowhere\n",
    });
    expect(issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(["llm_providers.v.type", "defaults.llm_provider"]),
    );
  });
});
