import type { AuthorizationConfig } from "@tarsy/config";
import { describe, expect, it } from "vitest";
import { ALL_PROJECTS, createAuthorizer, type Identity, receiverIdentity } from "../src/index.ts";

const base: AuthorizationConfig = {
  enabled: true,
  scopes: "groups",
  policy_default: "",
  projects: ["prod", "security", "dev"],
  default_project: "prod",
  trusted_proxies: ["127.0.0.1"],
  alertmanager: { identity: "alertmanager", project: "prod" },
  user_token_ttl_ms: 60_000,
  policy: `
    g, team-sre, role:sre
    g, platform-admins, role:admin
    g, bob, role:viewer
    p, role:sre, sessions, *, prod/*, allow
    p, role:sre, sessions, get, security/*, allow
    p, role:sre, sessions, delete, prod/*, deny   # nobody in sre deletes
    p, role:viewer, sessions, get, dev/*, allow
    p, role:admin, sessions, *, */*, allow
    p, carol, sessions, get, dev/*, allow
  `,
};

const user = (name: string, groups: string[] = []): Identity => ({
  user: name,
  groups,
  source: "proxy",
});

describe("the authorizer", () => {
  it("allows what a group's role grants, in its projects only", async () => {
    const authz = await createAuthorizer(base);
    const alice = user("alice", ["team-sre"]);
    expect(authz.can(alice, "get", "prod")).toBe(true);
    expect(authz.can(alice, "create", "prod")).toBe(true);
    expect(authz.can(alice, "cancel", "prod", "5f0e…")).toBe(true);
    expect(authz.can(alice, "get", "security")).toBe(true);
    expect(authz.can(alice, "update", "security")).toBe(false);
    expect(authz.can(alice, "get", "dev")).toBe(false);
    expect(authz.projectsFor(alice, "get")).toEqual(["prod", "security"]);
    expect(authz.projectsFor(alice, "create")).toEqual(["prod"]);
  });

  it("lets a deny line win over an allow", async () => {
    const authz = await createAuthorizer(base);
    const alice = user("alice", ["team-sre"]);
    expect(authz.can(alice, "delete", "prod")).toBe(false);
    // Also when another of the caller's groups would allow it.
    expect(authz.can(user("dana", ["team-sre", "platform-admins"]), "delete", "prod")).toBe(false);
    expect(authz.can(user("erin", ["platform-admins"]), "delete", "prod")).toBe(true);
  });

  it("maps users as well as groups, and reads the user's own lines", async () => {
    const authz = await createAuthorizer(base);
    expect(authz.can(user("bob"), "get", "dev")).toBe(true);
    expect(authz.can(user("carol"), "get", "dev")).toBe(true);
    expect(authz.can(user("carol"), "get", "prod")).toBe(false);
  });

  it("gives admin of everything only to a */* line", async () => {
    const authz = await createAuthorizer(base);
    expect(authz.can(user("erin", ["platform-admins"]), "admin", ALL_PROJECTS)).toBe(true);
    expect(authz.can(user("alice", ["team-sre"]), "admin", ALL_PROJECTS)).toBe(false);
    expect(authz.can(user("alice", ["team-sre"]), "admin", "prod")).toBe(true);
  });

  it("denies everything to nobody, and to everybody when enabled with no policy", async () => {
    const authz = await createAuthorizer(base);
    const nobody: Identity = { user: "anonymous", groups: [], source: "none" };
    expect(authz.permissions(nobody)).toEqual([]);
    const empty = await createAuthorizer({ ...base, policy: "" });
    expect(empty.permissions(user("erin", ["platform-admins"]))).toEqual([]);
    expect(empty.can(user("erin", ["platform-admins"]), "get", "prod")).toBe(false);
  });

  it("gives every identified caller the policy_default role", async () => {
    const authz = await createAuthorizer({ ...base, policy_default: "role:viewer" });
    expect(authz.can(user("zed"), "get", "dev")).toBe(true);
    expect(authz.can(user("zed"), "get", "prod")).toBe(false);
    const nobody: Identity = { user: "anonymous", groups: [], source: "none" };
    expect(authz.can(nobody, "get", "dev")).toBe(false);
  });

  it("binds an API token to its role in its one project", async () => {
    const authz = await createAuthorizer(base);
    const token: Identity = {
      user: "token:ci",
      groups: [],
      source: "token",
      token: { id: "t1", name: "ci", project: "security", role: "role:sre" },
    };
    expect(authz.can(token, "get", "security")).toBe(true);
    expect(authz.can(token, "create", "security")).toBe(false);
    // role:sre may do everything in prod, but the token is for security only.
    expect(authz.can(token, "get", "prod")).toBe(false);
    expect(authz.permissions(token)).toEqual([{ project: "security", actions: ["get"] }]);
  });

  it("lets the Alertmanager receiver create in its project, elsewhere only by policy", async () => {
    const authz = await createAuthorizer({
      ...base,
      policy: `${base.policy}\n p, alertmanager, sessions, create, security/*, allow`,
    });
    const receiver = receiverIdentity(base);
    expect(authz.can(receiver, "create", "prod")).toBe(true);
    expect(authz.can(receiver, "create", "security")).toBe(true);
    expect(authz.can(receiver, "create", "dev")).toBe(false);
    expect(authz.can(receiver, "get", "prod")).toBe(false);
  });

  it("allows everything while authorization is off", async () => {
    const authz = await createAuthorizer({ ...base, enabled: false, policy: "" });
    const local: Identity = { user: "api-client", groups: [], source: "local" };
    expect(authz.can(local, "admin", ALL_PROJECTS)).toBe(true);
    expect(authz.projectsFor(local, "create")).toEqual(["prod", "security", "dev"]);
  });
});
