import type { AuthMeResponse, AuthzActionName } from "@tarsy/contracts";

/**
 * What the caller may do, from `GET /api/v1/auth/me`, loaded once when the page starts. The
 * dashboard only hides what the caller may not do; the API stays the boundary.
 */
export type AccessState =
  | { status: "loading" }
  | { status: "ready"; me: AuthMeResponse }
  | { status: "error"; error: Error };

export interface AccessStore {
  readonly current: AccessState;
  /** Calls `fn` on every change; returns the unsubscribe. */
  onChange(fn: (state: AccessState) => void): () => void;
}

/** Starts loading `/auth/me` now; the store holds the answer (or why there is none). */
export function createAccessStore(load: () => Promise<AuthMeResponse>): AccessStore {
  let current: AccessState = { status: "loading" };
  const listeners = new Set<(state: AccessState) => void>();
  const set = (next: AccessState) => {
    current = next;
    for (const fn of listeners) fn(next);
  };
  load().then(
    (me) => set({ status: "ready", me }),
    (error: Error) => set({ status: "error", error }),
  );
  return {
    get current() {
      return current;
    },
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}

/** Whether the caller may do `action` in `project` (false until `/auth/me` has answered). */
export function can(state: AccessState, action: AuthzActionName, project: string): boolean {
  if (state.status !== "ready") return false;
  return state.me.projects.some((p) => p.project === project && p.actions.includes(action));
}

/** The projects where the caller may do `action`, in the configured order. */
export function projectsWith(state: AccessState, action: AuthzActionName): string[] {
  if (state.status !== "ready") return [];
  return state.me.projects.filter((p) => p.actions.includes(action)).map((p) => p.project);
}

/** Every project the caller may see at all (the list filter's options). */
export function visibleProjects(state: AccessState): string[] {
  return state.status === "ready" ? state.me.projects.map((p) => p.project) : [];
}

/** The submit form's initial project: the default one if the caller may create there. */
export function initialSubmitProject(state: AccessState): string {
  const allowed = projectsWith(state, "create");
  if (state.status === "ready" && allowed.includes(state.me.default_project)) {
    return state.me.default_project;
  }
  return allowed[0] ?? "";
}

/**
 * Whether the caller administers any project: the admin-only parts (the configuration viewer)
 * are offered only then. The API decides the rest (the viewer needs `admin` of every project;
 * the page hides it when the API refuses).
 */
export function isAdminSomewhere(state: AccessState): boolean {
  return projectsWith(state, "admin").length > 0;
}
