import { AUTHZ_ACTIONS, type AuthorizationConfig, type AuthzAction } from "@tarsy/config";
import type { Identity } from "./identity.ts";
import { createPolicy } from "./policy.ts";

/** Every project, for an action that spans them all (global admin). */
export const ALL_PROJECTS = "*";

export interface Authorizer {
  readonly enabled: boolean;
  readonly projects: readonly string[];
  readonly defaultProject: string;
  /**
   * Whether the identity may do the action in the project (on one session of it, when given).
   * `ALL_PROJECTS` asks for every project at once (admin of the whole system).
   */
  can(identity: Identity, action: AuthzAction, project: string, sessionId?: string): boolean;
  /** The projects in which the identity may do the action. */
  projectsFor(identity: Identity, action: AuthzAction): string[];
  /** What the identity may do, project by project (the dashboard hides the rest). */
  permissions(identity: Identity): { project: string; actions: AuthzAction[] }[];
}

/**
 * The one authorization check of the system (ingest-api and stream-relay call it alike).
 * Off: everything is allowed. On: a caller's subjects are their user name, e-mail, groups and
 * `policy_default`; an API token stands for its role in its one project; the Alertmanager
 * receiver may create sessions in its mapped project. With no policy line, nobody may do
 * anything: enabled never means open.
 */
export async function createAuthorizer(config: AuthorizationConfig): Promise<Authorizer> {
  const policy = await createPolicy(config.policy, config.projects);
  const subjectsOf = (identity: Identity): string[] => {
    if (identity.source === "token") return identity.token ? [identity.token.role] : [];
    if (identity.source === "none") return [];
    return [identity.user, identity.email, ...identity.groups, config.policy_default].filter(
      (s): s is string => Boolean(s),
    );
  };
  const can: Authorizer["can"] = (identity, action, project, sessionId) => {
    if (!config.enabled) return true;
    if (identity.source === "none") return false;
    if (identity.source === "token" && identity.token?.project !== project) return false;
    if (
      identity.source === "receiver" &&
      action === "create" &&
      project === config.alertmanager.project
    ) {
      return true;
    }
    const object = `${project}/${sessionId ?? "*"}`;
    return policy.allows(subjectsOf(identity), action, object);
  };
  return {
    enabled: config.enabled,
    projects: config.projects,
    defaultProject: config.default_project,
    can,
    projectsFor: (identity, action) => config.projects.filter((p) => can(identity, action, p)),
    permissions: (identity) =>
      config.projects
        .map((project) => ({
          project,
          actions: AUTHZ_ACTIONS.filter((a) => can(identity, a, project)),
        }))
        .filter((p) => p.actions.length > 0),
  };
}
