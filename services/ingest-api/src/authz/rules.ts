import type { AuthzAction } from "@tarsy/config";

/**
 * What a route needs of its caller while authorization is on. The guard applies the rule
 * before the route runs; the matrix test enumerates the app's routes and fails on any route
 * this table does not name.
 */
export type RouteRule =
  /** Nobody needs to be identified (probes, metrics, the OpenAPI document, the dashboard). */
  | { kind: "public" }
  /** Any identified caller (system read routes). */
  | { kind: "identified" }
  /** Lists: any identified caller, the rows filtered to the projects they may `get`. */
  | { kind: "list" }
  /** One session (`:id`): 404 outside the caller's projects, 403 when the action is not theirs. */
  | { kind: "session"; action: AuthzAction }
  /**
   * One investigation memory (`:id`), in its project: 404 `memory_not_found` outside the
   * caller's projects, 403 when the action is not theirs.
   */
  | { kind: "memory"; action: AuthzAction }
  /**
   * Sessions named in the body (bulk review): any identified caller; the route checks the
   * action on each session's project and answers per session (`not_found` outside theirs).
   */
  | { kind: "sessions"; action: AuthzAction }
  /** Submit: `create` in the project the body names (checked by the route once it is read). */
  | { kind: "submit" }
  /**
   * API tokens: `admin` of at least one project; of the token's own project for a create or a
   * revoke (checked by the route), and a list shows the projects the caller administers.
   */
  | { kind: "project_admin" }
  /** `admin` of every project. */
  | { kind: "global_admin" }
  /** The Alertmanager receiver: its own credentials (webhook secret or an API token). */
  | { kind: "receiver" };

export interface RouteEntry {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  rule: RouteRule;
}

const get = (path: string, rule: RouteRule): RouteEntry => ({ method: "GET", path, rule });
const post = (path: string, rule: RouteRule): RouteEntry => ({ method: "POST", path, rule });
const session = (action: AuthzAction): RouteRule => ({ kind: "session", action });
const memory = (action: AuthzAction): RouteRule => ({ kind: "memory", action });
const PUBLIC: RouteRule = { kind: "public" };
const IDENTIFIED: RouteRule = { kind: "identified" };
const LIST: RouteRule = { kind: "list" };

export const ROUTE_RULES: readonly RouteEntry[] = [
  get("/api/v1/openapi.json", PUBLIC),
  get("/metrics", PUBLIC),
  get("/ready", PUBLIC),
  get("/health", PUBLIC),
  get("/config.json", PUBLIC),
  get("/*", PUBLIC),
  post("/api/v1/alerts/alertmanager", { kind: "receiver" }),
  post("/api/v1/alerts", { kind: "submit" }),
  get("/api/v1/sessions", LIST),
  get("/api/v1/sessions/active", LIST),
  get("/api/v1/sessions/filter-options", LIST),
  get("/api/v1/sessions/:id", session("get")),
  get("/api/v1/sessions/:id/summary", session("get")),
  get("/api/v1/sessions/:id/status", session("get")),
  get("/api/v1/sessions/:id/timeline", session("get")),
  get("/api/v1/sessions/:id/trace", session("get")),
  get("/api/v1/sessions/:id/trace/llm/:interactionId", session("get")),
  get("/api/v1/sessions/:id/trace/mcp/:interactionId", session("get")),
  post("/api/v1/sessions/:id/cancel", session("cancel")),
  { method: "DELETE", path: "/api/v1/sessions/:id", rule: session("delete") },
  post("/api/v1/sessions/:id/chat/messages", session("update")),
  post("/api/v1/sessions/:id/score", session("update")),
  get("/api/v1/sessions/:id/score", session("get")),
  get("/api/v1/sessions/:id/notifications", session("get")),
  {
    method: "PATCH",
    path: "/api/v1/sessions/review",
    rule: { kind: "sessions", action: "update" },
  },
  get("/api/v1/sessions/:id/review-activity", session("get")),
  get("/api/v1/sessions/triage/:group", LIST),
  get("/api/v1/sessions/:id/memories", session("get")),
  get("/api/v1/sessions/:id/injected-memories", session("get")),
  get("/api/v1/memories", LIST),
  get("/api/v1/memories/:id", memory("get")),
  { method: "PATCH", path: "/api/v1/memories/:id", rule: memory("update") },
  { method: "DELETE", path: "/api/v1/memories/:id", rule: memory("delete") },
  get("/api/v1/system/warnings", IDENTIFIED),
  get("/api/v1/system/mcp-servers", IDENTIFIED),
  get("/api/v1/system/alert-types", IDENTIFIED),
  get("/api/v1/system/default-tools", IDENTIFIED),
  get("/api/v1/system/config", { kind: "global_admin" }),
  get("/api/v1/runbooks", IDENTIFIED),
  get("/api/v1/usage/summary", LIST),
  get("/api/v1/usage/series", LIST),
  get("/api/v1/auth/me", IDENTIFIED),
  get("/api/v1/tokens", { kind: "project_admin" }),
  post("/api/v1/tokens", { kind: "project_admin" }),
  { method: "DELETE", path: "/api/v1/tokens/:id", rule: { kind: "project_admin" } },
  get("/api/v1/audit", { kind: "global_admin" }),
  // Action requests: the route finds the session and checks `get` (404 outside the caller's
  // projects) and, to decide, `approve` on its project.
  get("/api/v1/actions", LIST),
  get("/api/v1/actions/:id", IDENTIFIED),
  get("/api/v1/actions/:id/audit", IDENTIFIED),
  post("/api/v1/actions/:id/approve", IDENTIFIED),
  post("/api/v1/actions/:id/deny", IDENTIFIED),
  get("/api/v1/dead-letters", { kind: "global_admin" }),
  post("/api/v1/dead-letters/:seq/redrive", { kind: "global_admin" }),
];

/** The action a rule stands for in the audit log. */
export function actionOf(rule: RouteRule): AuthzAction {
  switch (rule.kind) {
    case "session":
    case "sessions":
    case "memory":
      return rule.action;
    case "submit":
    case "receiver":
      return "create";
    case "project_admin":
    case "global_admin":
      return "admin";
    case "public":
    case "identified":
    case "list":
      return "get";
    default:
      return rule satisfies never;
  }
}

const patternOf = (path: string): RegExp =>
  path === "/*"
    ? /^\/.*$/
    : new RegExp(`^${path.replace(/[.]/g, "\\.").replace(/:[A-Za-z]+/g, "([^/]+)")}/?$`);

const COMPILED = ROUTE_RULES.map((entry) => ({ ...entry, pattern: patternOf(entry.path) }));

/**
 * The rule of a request, the most specific entry first (a static segment beats `:id`, every
 * entry beats `*`); undefined for a path no route serves (the app answers 404).
 */
export function ruleFor(
  method: string,
  path: string,
): { entry: RouteEntry; params: string[] } | undefined {
  const m = method === "HEAD" ? "GET" : method;
  const hits = COMPILED.filter((e) => e.method === m && e.pattern.test(path));
  hits.sort((a, b) => specificity(b.path) - specificity(a.path));
  const hit = hits[0];
  if (!hit) return undefined;
  const params = (hit.pattern.exec(path) ?? []).slice(1);
  return { entry: hit, params };
}

const specificity = (path: string): number =>
  path === "/*" ? -1 : path.split("/").filter((s) => s && !s.startsWith(":")).length;
