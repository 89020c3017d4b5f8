import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { AUTHZ_ACTIONS, parsePolicy } from "../src/index.ts";
import { load, loadIssues } from "./helpers.ts";

const POLICY = `
authorization:
  enabled: true
  scopes: groups
  policy_default: ""
  projects: [prod-incidents, security-investigations]
  default_project: prod-incidents
  trusted_proxies: ["10.0.0.0/8", "127.0.0.1", "fd00::/8"]
  alertmanager: { identity: am-receiver, project: prod-incidents, project_label: tarsy_project }
  policy: |
    # Group mappings (OIDC groups -> roles)
    g, team-sre, role:sre
    g, platform-admins, role:admin

    p, role:sre, sessions, *, prod-incidents/*, allow
    p, role:sre, sessions, delete, prod-incidents/*, deny
    p, role:admin, sessions, *, */*, allow
`;

describe("authorization in tarsy.yaml", () => {
  it("is off by default: one default project, loopback proxies trusted", () => {
    const { config } = load({});
    expect(config.authorization).toMatchObject({
      enabled: false,
      projects: ["default"],
      default_project: "default",
      trusted_proxies: ["127.0.0.0/8", "::1"],
      policy: "",
      policy_default: "",
      user_token_ttl_ms: 1_800_000,
    });
  });

  it("reads the Go TARSy's shape, with our trusted proxies and Alertmanager mapping", () => {
    const { config, warnings } = load({ tarsy: POLICY }, { GOOGLE_API_KEY: "k" });
    expect(warnings).toEqual([]);
    expect(config.authorization).toMatchObject({
      enabled: true,
      scopes: "groups",
      projects: ["prod-incidents", "security-investigations"],
      default_project: "prod-incidents",
      trusted_proxies: ["10.0.0.0/8", "127.0.0.1", "fd00::/8"],
      alertmanager: {
        identity: "am-receiver",
        project: "prod-incidents",
        project_label: "tarsy_project",
      },
    });
    const { rules, problems } = parsePolicy(
      config.authorization.policy,
      config.authorization.projects,
    );
    expect(problems).toEqual([]);
    expect(rules.map((r) => r.kind)).toEqual(["g", "g", "p", "p", "p"]);
    expect(rules[3]).toMatchObject({ action: "delete", effect: "deny", line: 6 });
  });

  it("keeps the Alertmanager webhook closed without credentials unless allow_unauthenticated", () => {
    expect(load({ tarsy: POLICY }).config.authorization.alertmanager.allow_unauthenticated).toBe(
      false,
    );
    const opened = POLICY.replace(
      "project_label: tarsy_project }",
      "project_label: tarsy_project, allow_unauthenticated: true }",
    );
    expect(opened).not.toBe(POLICY);
    expect(load({ tarsy: opened }).config.authorization.alertmanager.allow_unauthenticated).toBe(
      true,
    );
    const issues = loadIssues({
      tarsy: POLICY.replace(
        "project_label: tarsy_project }",
        "allow_unauthenticated: yes-please }",
      ),
    });
    expect(issues.map((i) => i.path)).toEqual(["authorization.alertmanager.allow_unauthenticated"]);
  });

  it("names the file and the path of a trusted proxy that is no address", () => {
    const issues = loadIssues({
      tarsy: `
authorization:
  enabled: true
  trusted_proxies: ["10.0.0.0/33", "example.com", "10.1.2.3/8/1"]
`,
    });
    expect(issues.map((i) => `${i.file}: ${i.path}: ${i.message}`)).toEqual([
      'tarsy.yaml: authorization.trusted_proxies[0]: "10.0.0.0/33" is not an IP address or CIDR block',
      'tarsy.yaml: authorization.trusted_proxies[1]: "example.com" is not an IP address or CIDR block',
      'tarsy.yaml: authorization.trusted_proxies[2]: "10.1.2.3/8/1" is not an IP address or CIDR block',
    ]);
  });

  it("names the path, the policy line and the tarsy.yaml line of every mistake in the policy", () => {
    const issues = loadIssues({
      tarsy: `
authorization:
  enabled: true
  projects: [prod, prod]
  default_project: staging
  policy: |
    g, team-sre
    p, role:sre, sessions, read, prod/*, allow
    p, role:sre, clusters, get, prod/*
    p, role:sre, sessions, get, nowhere/*
    p, role:sre, sessions, get, prod/one-session
    p, role:sre, sessions, get, prod/*, maybe
    x, y, z
`,
    });
    const lines = issues.map((i) => `${i.path}: ${i.message}`);
    expect(lines).toEqual([
      'authorization.projects: "prod" is listed twice',
      'authorization.default_project: "staging" is not in projects',
      expect.stringMatching(/^authorization\.policy: line 1 \(file line 7\): a g line is/),
      expect.stringMatching(
        /^authorization\.policy: line 2 \(file line 8\): unknown action "read"/,
      ),
      expect.stringMatching(
        /^authorization\.policy: line 3 \(file line 9\): unknown resource "clusters"/,
      ),
      expect.stringMatching(
        /^authorization\.policy: line 4 \(file line 10\): unknown project "nowhere"/,
      ),
      expect.stringMatching(/^authorization\.policy: line 5 \(file line 11\): the object is/),
      expect.stringMatching(
        /^authorization\.policy: line 6 \(file line 12\): unknown effect "maybe"/,
      ),
      expect.stringMatching(
        /^authorization\.policy: line 7 \(file line 13\): a policy line starts with p or g/,
      ),
    ]);
    expect(issues.every((i) => i.file.endsWith("tarsy.yaml"))).toBe(true);
  });

  it("counts the file line from where the policy's text starts, in a block or on its key's line", () => {
    const block = loadIssues({
      tarsy: [
        "# comment",
        "authorization:",
        "  enabled: true",
        "  projects: [prod]",
        "  policy: |",
        "    g, team-sre, role:sre",
        "",
        "    p, role:sre, sessions, read, prod/*",
      ].join("\n"),
    });
    expect(block.map((i) => i.message)).toEqual([
      expect.stringMatching(/^line 3 \(file line 8\): unknown action "read"/),
    ]);
    const inline = loadIssues({
      tarsy: [
        "authorization:",
        "  enabled: true",
        "  projects: [prod]",
        '  policy: "p, role:sre, sessions, get, nowhere/*"',
      ].join("\n"),
    });
    expect(inline.map((i) => i.message)).toEqual([
      expect.stringMatching(/^line 1 \(file line 4\): unknown project "nowhere"/),
    ]);
  });
});

describe("mcp_servers.<id>.auth", () => {
  const server = (auth: string, transport = "{ type: http, url: https://k8s-mcp:8443/mcp }") => `
mcp_servers:
  k8s:
    transport: ${transport}
    auth:
${auth}
`;

  it("defaults to the shared credentials", () => {
    const { config } = load({ tarsy: server("      mode: shared") }, { GOOGLE_API_KEY: "k" });
    expect(config.mcpServers.get("k8s")?.auth).toEqual({
      mode: "shared",
      fallback_to_shared: false,
    });
    expect(config.mcpServers.get("kubernetes-server")?.auth.mode).toBe("shared");
  });

  it("reads token exchange in the Go TARSy's format, the secret from the environment", () => {
    const { config } = load(
      {
        tarsy: server(`      mode: token_exchange
      token_exchange:
        sts_url: https://keycloak.example.com/realms/tarsy/protocol/openid-connect/token
        client_id: tarsy-kube-exchange
        client_secret: "{{.KUBE_STS_CLIENT_SECRET}}"
        audience: kubernetes-mcp-server
        scopes: [openid]`),
      },
      { GOOGLE_API_KEY: "k", KUBE_STS_CLIENT_SECRET: "s3cr3t" },
    );
    expect(config.mcpServers.get("k8s")?.auth).toEqual({
      mode: "token_exchange",
      fallback_to_shared: false,
      token_exchange: {
        sts_url: "https://keycloak.example.com/realms/tarsy/protocol/openid-connect/token",
        client_id: "tarsy-kube-exchange",
        client_secret: "s3cr3t",
        audience: "kubernetes-mcp-server",
        scopes: ["openid"],
      },
    });
  });

  it("refuses a per-user mode on stdio, an exchange without its block or secret, a bad mode", () => {
    const stdio = "{ type: stdio, command: kubernetes-mcp-server }";
    expect(loadIssues({ tarsy: server("      mode: forward_user_token", stdio) })).toEqual([
      expect.objectContaining({
        path: "mcp_servers.k8s.auth.mode",
        message: expect.stringMatching(/needs an http or sse transport/),
      }),
    ]);
    expect(loadIssues({ tarsy: server("      mode: token_exchange") })).toEqual([
      expect.objectContaining({
        path: "mcp_servers.k8s.auth.token_exchange",
        message: expect.stringMatching(/needs a token_exchange block/),
      }),
    ]);
    const noSecret = server(`      mode: token_exchange
      token_exchange: { sts_url: "https://sts.example.com/token", client_id: tarsy }`);
    expect(loadIssues({ tarsy: noSecret })).toEqual([
      expect.objectContaining({
        path: "mcp_servers.k8s.auth.token_exchange",
        message: expect.stringMatching(/needs client_secret/),
      }),
    ]);
    expect(loadIssues({ tarsy: server("      mode: impersonate") })).toEqual([
      expect.objectContaining({ path: "mcp_servers.k8s.auth.mode" }),
    ]);
  });
});

describe("the documented authorization examples", () => {
  const ROOT = resolve(import.meta.dirname, "../../..");
  /** The ```yaml blocks of a Markdown file that show an `authorization` policy. */
  const examples = (file: string): string[] =>
    [...readFileSync(resolve(ROOT, file), "utf8").matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => m[1] ?? "")
      .filter((block) => /^authorization:/m.test(block) && /^ {2}policy: /m.test(block));

  it.each(["README.md", "docs/operations.md"])(
    "%s: every authorization policy example loads, and its policy parses into the lines it shows",
    (file) => {
      const blocks = examples(file);
      expect(blocks.length).toBeGreaterThan(0);
      for (const block of blocks) {
        const { config } = load({ tarsy: block });
        const { enabled, policy, projects, scopes, policy_default } = config.authorization;
        expect(enabled).toBe(true);
        // The example shows the groups claim and policy_default, as tarsy.yaml.example does.
        expect(block).toMatch(/^ {2}scopes: /m);
        expect(block).toMatch(/^ {2}policy_default: /m);
        expect([scopes, policy_default]).toEqual(["groups", ""]);
        const { rules, problems } = parsePolicy(policy, projects);
        expect(problems).toEqual([]);
        const shown = policy.split("\n").filter((l) => /^\s*[pg],/.test(l));
        expect(rules).toHaveLength(shown.length);
        for (const rule of rules) {
          if (rule.kind === "p" && rule.action !== "*") {
            expect(AUTHZ_ACTIONS).toContain(rule.action);
          }
        }
      }
    },
  );

  it("the approve action (reserved for action approvals) is a policy action that parses", () => {
    const { rules, problems } = parsePolicy("p, approver, sessions, approve, prod/*", ["prod"]);
    expect(problems).toEqual([]);
    expect(rules).toEqual([expect.objectContaining({ kind: "p", action: "approve" })]);
  });
});
