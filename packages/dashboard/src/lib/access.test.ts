import type { AuthMeResponse } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import {
  type AccessState,
  can,
  createAccessStore,
  initialSubmitProject,
  isAdminSomewhere,
  projectsWith,
  visibleProjects,
} from "./access.ts";

const me = (patch: Partial<AuthMeResponse> = {}): AccessState => ({
  status: "ready",
  me: {
    enabled: true,
    user: "alice",
    email: null,
    groups: ["sre"],
    source: "proxy",
    default_project: "payments",
    projects: [
      { project: "payments", actions: ["get"] },
      { project: "platform", actions: ["get", "create", "cancel", "update"] },
    ],
    ...patch,
  },
});

describe("access from /auth/me", () => {
  it("answers per project and action, and nothing until /auth/me has answered", () => {
    const state = me();
    expect(can(state, "cancel", "platform")).toBe(true);
    expect(can(state, "cancel", "payments")).toBe(false);
    expect(can(state, "get", "elsewhere")).toBe(false);
    expect(projectsWith(state, "create")).toEqual(["platform"]);
    expect(visibleProjects(state)).toEqual(["payments", "platform"]);
    expect(isAdminSomewhere(state)).toBe(false);
    for (const other of [
      { status: "loading" },
      { status: "error", error: new Error("x") },
    ] as const) {
      expect(can(other, "get", "payments")).toBe(false);
      expect(projectsWith(other, "get")).toEqual([]);
      expect(initialSubmitProject(other)).toBe("");
    }
  });

  it("starts the submit form in the default project, else the first one the caller may create in", () => {
    expect(initialSubmitProject(me())).toBe("platform");
    expect(
      initialSubmitProject(
        me({ projects: [{ project: "payments", actions: ["create", "admin"] }] }),
      ),
    ).toBe("payments");
    expect(initialSubmitProject(me({ projects: [] }))).toBe("");
    expect(isAdminSomewhere(me({ projects: [{ project: "a", actions: ["admin"] }] }))).toBe(true);
  });

  it("holds the answer once it arrives and tells its listeners", async () => {
    const answer = me();
    if (answer.status !== "ready") throw new Error("unreachable");
    const store = createAccessStore(() => Promise.resolve(answer.me));
    expect(store.current.status).toBe("loading");
    const seen = await new Promise<AccessState>((resolve) => store.onChange(resolve));
    expect(seen).toEqual(answer);
    expect(store.current).toEqual(answer);
    const failed = createAccessStore(() => Promise.reject(new Error("HTTP 401")));
    await new Promise<void>((resolve) => failed.onChange(() => resolve()));
    expect(failed.current).toMatchObject({ status: "error", error: { message: "HTTP 401" } });
  });
});
