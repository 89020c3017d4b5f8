/** Session labels: the `label_maps` catalog, its selectors and their errors (file, path, line). */
import { describe, expect, it } from "vitest";
import { configView, formatIssue, resolveLabelMap } from "../src/index.ts";
import { load, loadIssues } from "./helpers.ts";

const CHAIN = `
agent_chains:
  paging:
    alert_types: [Paging]
    label_map: oncall
    stages:
      - name: investigate
        agents: [{ name: KubernetesAgent }]
  back-to-builtin:
    alert_types: [Builtin]
    label_map: builtin
    stages:
      - name: investigate
        agents: [{ name: KubernetesAgent }]
  inherits:
    alert_types: [Inherits]
    stages:
      - name: investigate
        agents: [{ name: KubernetesAgent }]
`;

const CATALOG = `
label_maps:
  oncall:
    instructions: |
      Prefer the analysis's Recommended Action.
    labels:
      - label: monitor
        description: Look again if it persists.
      - label: page
        description: A human must intervene now.
      - label: false_positive
        description: Close with no action.
  ops-tags:
    multi: true
    labels:
      - { label: watch, description: Look again. }
      - { label: page, description: Page the on-call. }
`;

describe("label_maps", () => {
  it("without YAML: the built-in exclusive map watch, action, noise is what every chain uses", () => {
    const { config, warnings } = load({});
    expect([...config.labelMaps.keys()]).toEqual(["builtin"]);
    const builtin = config.labelMaps.get("builtin");
    expect(builtin).toMatchObject({ multi: false, builtin: true });
    expect(builtin?.labels.map((l) => l.label)).toEqual(["watch", "action", "noise"]);
    expect(builtin?.instructions).toContain("at most one of watch, action and noise");
    const chain = config.chains.get("kubernetes-agent-chain");
    expect(resolveLabelMap(config, chain).name).toBe("builtin");
    expect(warnings.filter((w) => w.path.includes("label"))).toEqual([]);
  });

  it("keeps the labels' order; defaults then the chain select (the last one set wins)", () => {
    const { config, warnings } = load({
      tarsy: `${CATALOG}\ndefaults:\n  label_map: ops-tags\n${CHAIN}`,
    });
    expect(warnings.filter((w) => w.unsupported)).toEqual([]);
    expect(config.labelMaps.get("oncall")).toEqual({
      multi: false,
      instructions: "Prefer the analysis's Recommended Action.",
      labels: [
        { label: "monitor", description: "Look again if it persists." },
        { label: "page", description: "A human must intervene now." },
        { label: "false_positive", description: "Close with no action." },
      ],
      builtin: false,
    });
    expect(config.labelMaps.get("ops-tags")?.multi).toBe(true);
    const pick = (id: string) => resolveLabelMap(config, config.chains.get(id)).name;
    expect(pick("paging")).toBe("oncall");
    expect(pick("back-to-builtin")).toBe("builtin");
    expect(pick("inherits")).toBe("ops-tags");
    // The configuration view shows the catalog (builtin included) and the raw selectors.
    const view = configView(config);
    expect(view.label_maps.map((m) => [m.name, m.multi, m.builtin])).toEqual([
      ["oncall", false, false],
      ["ops-tags", true, false],
      ["builtin", false, true],
    ]);
    expect(view.defaults.label_map).toBe("ops-tags");
    expect(view.chains.find((c) => c.id === "paging")?.label_map).toBe("oncall");
    expect(view.chains.find((c) => c.id === "inherits")?.label_map).toBeNull();
  });

  it("a YAML builtin replaces the shipped map whole, with a warning", () => {
    const { config, warnings, dir } = load({
      tarsy: `label_maps:\n  builtin:\n    labels:\n      - { label: closable, description: Nothing to do. }\n`,
    });
    expect(config.labelMaps.get("builtin")).toEqual({
      multi: false,
      labels: [{ label: "closable", description: "Nothing to do." }],
      builtin: false,
    });
    expect(warnings).toContainEqual({
      file: `${dir}/tarsy.yaml`,
      path: "label_maps.builtin",
      message:
        "replaces the built-in label map (watch, action, noise) whole; its instructions and labels are not merged",
    });
    expect(resolveLabelMap(config, undefined).map.labels.map((l) => l.label)).toEqual(["closable"]);
  });

  it("bad maps and keys are errors with their file, path and line", () => {
    const issues = loadIssues({
      tarsy: `label_maps:
  oncall:
    labels:
      - name: page
        description: Page.
      - label: "page please"
        description: Page.
  dup:
    labels:
      - { label: page, description: One. }
      - { label: Page, description: Two. }
  empty:
    labels: []
  "bad name":
    labels:
      - { label: x, description: y }
  blank:
    multi: yes-please
    labels:
      - { label: x, description: "" }
`,
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        {
          file: "tarsy.yaml",
          path: "label_maps.oncall.labels[0].name",
          message: 'unknown key "name" (did you mean "label"?)',
          line: 4,
        },
        {
          file: "tarsy.yaml",
          path: "label_maps.oncall.labels[0].label",
          message: "is required",
          line: 4,
        },
        {
          file: "tarsy.yaml",
          path: "label_maps.dup.labels[1].label",
          message: 'duplicate label "Page" (labels[0] has it; names are case-insensitive)',
          line: 11,
        },
        {
          file: "tarsy.yaml",
          path: "label_maps.empty.labels",
          message: "must list at least one label",
          line: 13,
        },
        {
          file: "tarsy.yaml",
          path: "label_maps.bad name",
          message: "label map name must start with a letter and hold only letters, digits, _ or -",
          line: 15,
        },
        {
          file: "tarsy.yaml",
          path: "label_maps.blank.multi",
          message: "expected boolean, received string",
          line: 18,
        },
        {
          file: "tarsy.yaml",
          path: "label_maps.blank.labels[0].description",
          message: "must not be empty",
          line: 20,
        },
      ]),
    );
    expect(issues.find((i) => i.path === "label_maps.oncall.labels[1].label")).toEqual({
      file: "tarsy.yaml",
      path: "label_maps.oncall.labels[1].label",
      message: "must start with a letter and hold only letters, digits, _ or -",
      line: 6,
    });
    expect(issues).toHaveLength(8);
  });

  it("a selector must name a catalog entry; the message names the file line", () => {
    const issues = loadIssues({
      tarsy: `defaults:\n  label_map: oncal\n${CATALOG}${CHAIN.replace("label_map: oncall", "label_map: nope")}`,
    });
    const known = '"oncall", "ops-tags", "builtin"';
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "defaults.label_map",
        message: `unknown label map "oncal" (label_maps has ${known})`,
        line: 2,
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.paging.label_map",
        message: `unknown label map "nope" (label_maps has ${known})`,
        line: 24,
      },
    ]);
    expect(formatIssue(issues[0] as (typeof issues)[number])).toBe(
      `tarsy.yaml:2: defaults.label_map: unknown label map "oncal" (label_maps has ${known})`,
    );
  });

  it("a selector that is not a name is an error with its line", () => {
    const issues = loadIssues({
      tarsy: "defaults:\n  llm_provider: google-default\n  label_map: 9lives\n",
    });
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "defaults.label_map",
        message: "must start with a letter and hold only letters, digits, _ or -",
        line: 3,
      },
    ]);
  });

  it("label_maps must be a mapping", () => {
    expect(loadIssues({ tarsy: "label_maps: [oncall]\n" })).toEqual([
      {
        file: "tarsy.yaml",
        path: "label_maps",
        message: "must be a mapping of label map names",
        line: 1,
      },
    ]);
  });
});
