import { AUTHZ_RESOURCE, type AuthzAction, type PolicyRule, parsePolicy } from "@tarsy/config";
import { type Enforcer, newEnforcer, newModelFromString, StringAdapter } from "casbin";

/**
 * The casbin model, fixed in code (the Go TARSy's, with two holes closed): the action matches
 * `*` as well as itself, the project `*` matches every project (its own policies write `*`), and a `deny` line wins over any `allow`.
 * Requests are `(subject, "sessions", action, "<project>/<session id or *>")`.
 */
const model = (effect: string) => `
[request_definition]
r = sub, res, act, obj

[policy_definition]
p = sub, res, act, obj, eft

[role_definition]
g = _, _

[policy_effect]
e = ${effect}

[matchers]
m = g(r.sub, p.sub) && r.res == p.res && (p.act == "*" || r.act == p.act) && objectMatch(r.obj, p.obj)
`;

/**
 * `<project>/<session>` against a policy object `<project>/*`, whose project may be `*` too:
 * each `*` stands for one whole segment (casbin's globMatch does not match a `*` project).
 */
function objectMatch(requested: string, pattern: string): boolean {
  const want = requested.split("/");
  const have = pattern.split("/");
  return want.length === have.length && have.every((seg, i) => seg === "*" || seg === want[i]);
}

const csv = (rule: PolicyRule): string =>
  rule.kind === "g"
    ? `g, ${rule.member}, ${rule.role}`
    : `p, ${rule.subject}, ${rule.resource}, ${rule.action}, ${rule.object}, ${rule.effect}`;

export interface Policy {
  /**
   * Whether any of the subjects (a user, their groups, a role) may do the action on the object,
   * and none of them is denied it.
   */
  allows(subjects: readonly string[], action: AuthzAction, object: string): boolean;
}

/** The policy text as an enforcer; throws on a policy that config validation would refuse. */
export async function createPolicy(text: string, projects: readonly string[]): Promise<Policy> {
  const { rules, problems } = parsePolicy(text, projects);
  if (problems.length > 0) {
    const first = problems[0];
    throw new Error(`invalid policy at line ${first?.line}: ${first?.message}`);
  }
  const lines = rules.map(csv).join("\n");
  const build = async (effect: string): Promise<Enforcer> => {
    const enforcer = lines
      ? await newEnforcer(newModelFromString(model(effect)), new StringAdapter(lines))
      : await newEnforcer(newModelFromString(model(effect)));
    await enforcer.addFunction("objectMatch", objectMatch);
    return enforcer;
  };
  // Two enforcers over the same lines, as casbin's effects go: one true when some line
  // allows, one false when some line denies; so a deny for any of a caller's subjects wins.
  const [allow, noDeny] = await Promise.all([
    build("some(where (p.eft == allow))"),
    build("!some(where (p.eft == deny))"),
  ]);
  return {
    allows(subjects, action, object) {
      const ask = (e: Enforcer, s: string) => e.enforceSync(s, AUTHZ_RESOURCE, action, object);
      return subjects.some((s) => ask(allow, s)) && subjects.every((s) => ask(noDeny, s));
    },
  };
}
