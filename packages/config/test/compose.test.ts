/**
 * The compose stage's model (ADR-0025): `compose_provider`, `compose_backend` and
 * `compose_fallback_list` in `defaults` and on a chain, how they resolve, and what is an error.
 */
import { describe, expect, it } from "vitest";
import { configView, resolveComposeConfig } from "../src/index.ts";
import { load, loadIssues } from "./helpers.ts";

const PROVIDERS = `
llm_providers:
  canned: { type: scripted, model: scripted }
  frontier: { type: anthropic, model: claude-opus }
  mid: { type: openai, model: gpt-mid }
  cheap: { type: google, model: gemini-flash }
`;

const CHAINS = `
agent_chains:
  plain:
    alert_types: [Plain]
    stages: [{ name: s, agents: [KubernetesAgent] }]
  frontier:
    alert_types: [Frontier]
    llm_provider: frontier
    stages: [{ name: s, agents: [KubernetesAgent] }]
  own:
    alert_types: [Own]
    llm_provider: frontier
    compose_provider: cheap
    compose_backend: google-native
    compose_fallback_list: fast
    fallback_providers: [{ provider: canned, backend: scripted }]
    stages: [{ name: s, agents: [KubernetesAgent] }]
`;

function chainOf(config: ReturnType<typeof load>["config"], id: string) {
  const chain = config.chains.get(id);
  if (!chain) throw new Error(`chain ${id} missing`);
  return chain;
}

describe("compose_provider, compose_backend, compose_fallback_list", () => {
  it("defaults' compose knobs beat a chain's llm_provider; a chain's own knobs beat the defaults", () => {
    const { config, warnings } = load({
      providers: PROVIDERS,
      tarsy: `
defaults:
  llm_provider: canned
  compose_provider: mid
  compose_backend: langchain
  compose_fallback_list: premium
  fallback_providers: [{ provider: frontier, backend: langchain }]
fallback_lists:
  premium: [{ llm_provider: frontier, llm_backend: langchain }]
  fast: [{ llm_provider: cheap, llm_backend: google-native }]
${CHAINS}`,
    });
    // The keys are read now: none of them is listed as unsupported.
    expect(warnings.filter((w) => w.path.includes("compose"))).toEqual([]);
    expect(config.defaults).toMatchObject({
      compose_provider: "mid",
      compose_backend: "langchain",
      compose_fallback_list: "premium",
    });
    const pick = (id: string) => {
      const r = resolveComposeConfig(config, chainOf(config, id));
      return {
        agent: r.agent_name,
        provider: r.llm_provider_name,
        backend: r.llm_backend,
        list: r.fallback_list,
        fallbacks: r.fallback_providers.map((f) => `${f.provider_name}/${f.backend}`),
      };
    };
    expect(pick("plain")).toEqual({
      agent: "ComposeAgent",
      provider: "mid",
      backend: "langchain",
      list: "premium",
      fallbacks: ["frontier/langchain"],
    });
    // A frontier chain still composes on the defaults' mid-tier model.
    expect(pick("frontier")).toMatchObject({ provider: "mid", backend: "langchain" });
    // The chain's own knobs win, its own named list included (not its fallback_providers).
    expect(pick("own")).toEqual({
      agent: "ComposeAgent",
      provider: "cheap",
      backend: "google-native",
      list: "fast",
      fallbacks: ["cheap/google-native"],
    });
    // The configuration viewer (GET /system/config): the knobs as written, and each chain's
    // resolved compose and executive-summary models with their fallback walks.
    const view = configView(config);
    expect(view.defaults.compose).toEqual({
      llm_provider: "mid",
      llm_backend: "langchain",
      fallback_list: "premium",
    });
    expect(view.defaults.executive_summary).toEqual({
      llm_provider: null,
      llm_backend: null,
      fallback_list: null,
    });
    const viewed = (id: string) => view.chains.find((c) => c.id === id);
    expect(viewed("own")?.compose).toEqual({
      llm_provider: "cheap",
      llm_backend: "google-native",
      fallbacks: [{ llm_provider: "cheap", llm_backend: "google-native" }],
    });
    expect(viewed("frontier")?.compose).toMatchObject({ llm_provider: "mid" });
    // The executive summary, unlike compose, follows the chain's llm_provider.
    expect(viewed("frontier")?.executive_summary).toMatchObject({ llm_provider: "frontier" });
  });

  it("unset everywhere: the chain's llm_provider, then the defaults'; the backend the provider can run", () => {
    const { config } = load({
      providers: PROVIDERS,
      tarsy: `
defaults:
  llm_provider: canned
fallback_lists:
  fast: [{ llm_provider: cheap, llm_backend: google-native }]
${CHAINS}`,
    });
    const plain = resolveComposeConfig(config, chainOf(config, "plain"));
    expect([plain.llm_provider_name, plain.llm_backend, plain.fallback_list]).toEqual([
      "canned",
      "scripted",
      undefined,
    ]);
    // No backend set anywhere: the provider type's own.
    const frontier = resolveComposeConfig(config, chainOf(config, "frontier"));
    expect([frontier.llm_provider_name, frontier.llm_backend]).toEqual(["frontier", "langchain"]);
  });

  it("an unknown provider, a backend that cannot drive it and an unknown list are errors at their paths", () => {
    const issues = loadIssues({
      providers: PROVIDERS,
      tarsy: `
defaults:
  llm_provider: canned
  compose_provider: nowhere
  compose_fallback_list: missing
fallback_lists:
  premium: [{ llm_provider: frontier, llm_backend: langchain }]
agent_chains:
  bad:
    alert_types: [Bad]
    compose_provider: mid
    compose_backend: google-native
    compose_fallback_list: premum
    stages: [{ name: s, agents: [KubernetesAgent] }]
`,
    });
    expect(issues.filter((i) => i.path.includes("compose"))).toEqual([
      {
        file: "tarsy.yaml",
        path: "defaults.compose_provider",
        line: 4,
        message: 'unknown LLM provider "nowhere"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.bad.compose_backend",
        line: 12,
        message: 'llm_backend "google-native" cannot run LLM provider "mid" (type openai)',
      },
      {
        file: "tarsy.yaml",
        path: "defaults.compose_fallback_list",
        line: 5,
        message: 'unknown fallback list "missing" (fallback_lists has "premium")',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.bad.compose_fallback_list",
        line: 13,
        message: 'unknown fallback list "premum" (fallback_lists has "premium")',
      },
    ]);
  });
});
