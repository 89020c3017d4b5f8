import { isIP } from "node:net";
import { AuthzActionSchema } from "@tarsy/contracts";
import { z } from "zod";
import { DurationSchema } from "./schema.ts";

/**
 * `authorization` in tarsy.yaml (the Go TARSy's session-authorization design): who may see and
 * do what, by project. The casbin model is fixed in code (`@tarsy/authz`); the policy is CSV
 * lines as ArgoCD writes them:
 *
 *   g, <group or user>, <role>
 *   p, <role, group or user>, sessions, <action or *>, <project>/*, allow|deny
 */

/** What a caller may do (the wire's list, in contracts); `*` in a policy line is all of them. */
export const AUTHZ_ACTIONS = AuthzActionSchema.options;
export type AuthzAction = (typeof AUTHZ_ACTIONS)[number];
/** The one resource the policy speaks of. */
export const AUTHZ_RESOURCE = "sessions";
/** The project sessions go to when authorization is off, or when nobody names one. */
export const DEFAULT_PROJECT = "default";
const PROJECT_RE = /^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/;

/** A trusted proxy: an IPv4/IPv6 address or a CIDR block. */
const AddressOrCidr = z.string().refine(
  (value) => {
    const [address = "", bits, ...more] = value.split("/");
    const family = isIP(address);
    if (!family || more.length > 0) return false;
    if (bits === undefined) return true;
    const n = Number(bits);
    return /^\d+$/.test(bits) && n >= 0 && n <= (family === 4 ? 32 : 128);
  },
  { error: (issue) => `"${String(issue.input)}" is not an IP address or CIDR block` },
);

const Project = z.string().regex(PROJECT_RE, {
  error: (issue) =>
    `"${String(issue.input)}" is not a project name (lower-case letters, digits, '.', '_', '-')`,
});

export const AuthorizationSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** The identity claim that carries the caller's groups (oauth2-proxy: `groups`). */
  scopes: z.string().min(1).optional(),
  /** A role every identified caller has; empty means none (no access without a policy line). */
  policy_default: z.string().optional(),
  projects: z.array(Project).optional(),
  /** Where sessions go when the caller names no project. */
  default_project: Project.optional(),
  policy: z.string().optional(),
  /** Addresses identity headers are accepted from (default: loopback only). */
  trusted_proxies: z.array(AddressOrCidr).optional(),
  /** Who the Alertmanager receiver's credentials stand for, and where its alerts go. */
  alertmanager: z
    .strictObject({
      identity: z.string().min(1).optional(),
      project: Project.optional(),
      /** An alert label naming the project (it must be one the receiver may create in). */
      project_label: z.string().min(1).optional(),
      /**
       * Accept notifications without credentials while authorization is on. Off by default:
       * without ALERTMANAGER_BEARER_TOKEN / BASIC_* (or an API token) the webhook answers 401.
       */
      allow_unauthenticated: z.boolean().optional(),
    })
    .optional(),
  /** The longest a submitting user's token is kept for per-user MCP credentials. */
  user_token_ttl: DurationSchema.refine((ms) => ms > 0, {
    error: "must be longer than 0",
  }).optional(),
});
export type RawAuthorization = z.output<typeof AuthorizationSchema>;

export interface AuthorizationConfig {
  enabled: boolean;
  /** The claim whose values are the caller's groups. */
  scopes: string;
  policy_default: string;
  projects: string[];
  default_project: string;
  policy: string;
  trusted_proxies: string[];
  alertmanager: {
    identity: string;
    project: string;
    project_label?: string;
    /** The webhook takes notifications without credentials (default false: 401). */
    allow_unauthenticated?: boolean;
  };
  user_token_ttl_ms: number;
}

export function builtinAuthorization(): AuthorizationConfig {
  return {
    enabled: false,
    scopes: "groups",
    policy_default: "",
    projects: [DEFAULT_PROJECT],
    default_project: DEFAULT_PROJECT,
    policy: "",
    trusted_proxies: ["127.0.0.0/8", "::1"],
    alertmanager: { identity: "alertmanager", project: DEFAULT_PROJECT },
    user_token_ttl_ms: 30 * 60_000,
  };
}

export function toAuthorization(
  base: AuthorizationConfig,
  raw: RawAuthorization | undefined,
): AuthorizationConfig {
  if (!raw) return base;
  const projects = raw.projects ?? base.projects;
  const defaultProject = raw.default_project ?? (raw.projects ? projects[0] : undefined);
  return {
    enabled: raw.enabled ?? base.enabled,
    scopes: raw.scopes ?? base.scopes,
    policy_default: raw.policy_default ?? base.policy_default,
    projects,
    default_project: defaultProject ?? base.default_project,
    policy: raw.policy ?? base.policy,
    trusted_proxies: raw.trusted_proxies ?? base.trusted_proxies,
    alertmanager: {
      identity: raw.alertmanager?.identity ?? base.alertmanager.identity,
      project: raw.alertmanager?.project ?? defaultProject ?? base.alertmanager.project,
      ...(raw.alertmanager?.project_label ? { project_label: raw.alertmanager.project_label } : {}),
      allow_unauthenticated: raw.alertmanager?.allow_unauthenticated ?? false,
    },
    user_token_ttl_ms: raw.user_token_ttl ?? base.user_token_ttl_ms,
  };
}

/** One parsed policy line, with its 1-based line number in the `policy` text. */
export type PolicyRule =
  | { kind: "g"; line: number; member: string; role: string }
  | {
      kind: "p";
      line: number;
      subject: string;
      resource: string;
      action: string;
      object: string;
      effect: "allow" | "deny";
    };

export interface PolicyProblem {
  line: number;
  message: string;
}

/**
 * The policy's lines, or what is wrong with each bad one. Blank lines and `#` comments are
 * skipped; every other line is a `g` or `p` rule of the fixed model.
 */
export function parsePolicy(
  text: string,
  projects: readonly string[],
): { rules: PolicyRule[]; problems: PolicyProblem[] } {
  const rules: PolicyRule[] = [];
  const problems: PolicyProblem[] = [];
  const known = new Set(projects);
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const body = raw.replace(/(^|\s)#.*$/, "").trim();
    if (!body) continue;
    const rule = parseLine(body, i + 1, known);
    if (typeof rule === "string") problems.push({ line: i + 1, message: `${rule}: "${body}"` });
    else rules.push(rule);
  }
  return { rules, problems };
}

/** One non-empty policy line as a rule, or what is wrong with it. */
function parseLine(body: string, line: number, known: ReadonlySet<string>): PolicyRule | string {
  const fields = body.split(",").map((f) => f.trim());
  if (fields.some((f) => f === "")) return "empty field";
  const [kind, ...rest] = fields;
  if (kind === "g") {
    if (rest.length !== 2) return "a g line is `g, <group or user>, <role>`";
    return { kind: "g", line, member: rest[0] ?? "", role: rest[1] ?? "" };
  }
  if (kind !== "p") return "a policy line starts with p or g";
  if (rest.length !== 4 && rest.length !== 5) {
    return "a p line is `p, <subject>, sessions, <action>, <project>/*[, allow|deny]`";
  }
  const [subject = "", resource = "", action = "", object = "", effect = "allow"] = rest;
  if (resource !== AUTHZ_RESOURCE) return `unknown resource "${resource}" (only sessions)`;
  if (action !== "*" && !(AUTHZ_ACTIONS as readonly string[]).includes(action)) {
    return `unknown action "${action}" (one of ${AUTHZ_ACTIONS.join(", ")} or *)`;
  }
  if (effect !== "allow" && effect !== "deny") return `unknown effect "${effect}" (allow or deny)`;
  const [project = "", scope, ...more] = object.split("/");
  if (scope !== "*" || more.length > 0) {
    return `the object is "<project>/*" or "*/*", not "${object}"`;
  }
  if (project !== "*" && !known.has(project)) {
    return `unknown project "${project}" (not in authorization.projects)`;
  }
  return { kind: "p", line, subject, resource, action, object, effect };
}

/** Whether the value is a known project name. */
export const isProjectName = (value: string): boolean => PROJECT_RE.test(value);

/**
 * Problems of the section as a whole, as `[path, message]` pairs. A policy problem names its
 * line in the policy and, given the file line the policy starts on, its line in the file.
 */
export function authorizationProblems(
  config: AuthorizationConfig,
  policyFileLine?: number,
): [path: string, message: string, fileLine?: number][] {
  const out: [path: string, message: string, fileLine?: number][] = [];
  if (config.projects.length === 0) out.push(["projects", "at least one project is needed"]);
  const dup = config.projects.find((p, i) => config.projects.indexOf(p) !== i);
  if (dup) out.push(["projects", `"${dup}" is listed twice`]);
  if (!config.projects.includes(config.default_project)) {
    out.push(["default_project", `"${config.default_project}" is not in projects`]);
  }
  const am = config.alertmanager.project;
  if (am !== config.default_project && !config.projects.includes(am)) {
    out.push(["alertmanager.project", `"${am}" is not in projects`]);
  }
  for (const p of parsePolicy(config.policy, config.projects).problems) {
    const fileLine = policyFileLine === undefined ? undefined : policyFileLine + p.line - 1;
    const inFile = fileLine === undefined ? "" : ` (file line ${fileLine})`;
    out.push(["policy", `line ${p.line}${inFile}: ${p.message}`, fileLine]);
  }
  return out;
}
