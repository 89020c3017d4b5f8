import { bearerOf, type Identity, isApiTokenShape, receiverIdentity } from "@tarsy/authz";
import type { AlertmanagerIntakeResponse } from "@tarsy/contracts";
import type { Context, MiddlewareHandler } from "hono";
import { resolveCaller, socketAddress } from "../access.ts";
import type { Placement } from "../alertmanager-intake.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError } from "../errors.ts";
import { noteAudit, recordAudit } from "./audit.ts";

/** Who sent a notification: the receiver's configured identity, or an API token's. */
export interface ReceiverCaller {
  identity: Identity;
  address: string | undefined;
}

export interface Receiver {
  /**
   * The webhook's own credentials, or an API token as its bearer (401 otherwise, audited).
   * While authorization is on, a webhook without credentials refuses every notification but
   * an API token's, unless `authorization.alertmanager.allow_unauthenticated` opens it.
   */
  authenticate: MiddlewareHandler;
  of(c: Context): ReceiverCaller;
  /** An alert's project: its label's (`project_label`), else the receiver's or the token's. */
  place(caller: ReceiverCaller, labels: Record<string, string>): Placement;
  /**
   * Before anything is stored, the whole notification is refused (as a flood past the cap is)
   * when a label names a project that is not configured (400 `unknown_project`, naming it and
   * the alert), or a known one the caller may not `create` in (403, audited).
   */
  refuseUnplaceable(c: Context, caller: ReceiverCaller, alerts: LabelledAlert[]): void;
  /** One audit entry for the notification, one denial per refused project. */
  audit(c: Context, caller: ReceiverCaller, result: AlertmanagerIntakeResponse): void;
}

/** An alert's labels (the fingerprint absent for a notification's common labels). */
export interface LabelledAlert {
  fingerprint?: string;
  labels: Record<string, string>;
}

const CALLER = "receiverCaller";

/**
 * The Alertmanager receiver's identity: `authorization.alertmanager.identity` for the
 * webhook's credentials (ALERTMANAGER_BEARER_TOKEN / BASIC_*), or the API token it carries.
 */
export function receiverOf(deps: IngestResources, webhookAuth: MiddlewareHandler): Receiver {
  const { authorizer } = deps.access;
  const config = deps.config.authorization;
  const addressOf = deps.remoteAddressOf ?? socketAddress;
  const authenticate: MiddlewareHandler = async (c, next) => {
    const address = addressOf(c);
    const bearer = bearerOf(c.req.header("authorization"));
    if (bearer && isApiTokenShape(bearer)) {
      try {
        const identity = await resolveCaller(deps.access, c, address);
        c.set(CALLER as never, { identity, address } as never);
      } catch (err) {
        if (err instanceof HttpError && authorizer.enabled) {
          noteAudit(c, { action: "create", reason: err.message });
          recordAudit(deps, c, undefined, address, "denied", err.status);
        }
        throw err;
      }
      return next();
    }
    const identity = receiverIdentity(config);
    c.set(CALLER as never, { identity, address } as never);
    const refuse = (err: HttpError): HttpError => {
      if (authorizer.enabled) {
        noteAudit(c, { action: "create", reason: err.message });
        recordAudit(deps, c, undefined, address, "denied", err.status);
      }
      return err;
    };
    const unauthenticated =
      deps.settings.alertmanager.auth.kind === "none" &&
      config.alertmanager.allow_unauthenticated !== true;
    if (authorizer.enabled && unauthenticated) {
      c.header("WWW-Authenticate", "Bearer");
      throw refuse(
        new HttpError(
          401,
          "unauthorized",
          "the Alertmanager webhook takes no unauthenticated notifications while authorization is on: send an API token, or configure ALERTMANAGER_BEARER_TOKEN (or ALERTMANAGER_BASIC_USER/PASSWORD)",
        ),
      );
    }
    try {
      return await webhookAuth(c, next);
    } catch (err) {
      throw err instanceof HttpError && err.status === 401 ? refuse(err) : err;
    }
  };
  const place = (caller: ReceiverCaller, labels: Record<string, string>): Placement => {
    const label = config.alertmanager.project_label;
    const named = label ? labels[label]?.trim() || undefined : undefined;
    const own =
      caller.identity.source === "token" && caller.identity.token
        ? caller.identity.token.project
        : config.alertmanager.project;
    const project = named ?? own;
    if (!authorizer.projects.includes(project)) return { project, refused: "unknown_project" };
    if (!authorizer.can(caller.identity, "create", project)) {
      return { project, refused: "forbidden_project" };
    }
    return { project };
  };
  return {
    authenticate,
    of: (c) => c.get(CALLER as never) as ReceiverCaller,
    place,
    refuseUnplaceable(c, caller, alerts) {
      const placed = alerts.map((alert) => ({ alert, placement: place(caller, alert.labels) }));
      const unknown = placed.filter((p) => p.placement.refused === "unknown_project");
      if (unknown.length > 0) {
        const projects = [...new Set(unknown.map((u) => u.placement.project))];
        const named = unknown
          .map((u) => `'${u.placement.project}' (alert ${u.alert.fingerprint ?? "group labels"})`)
          .join(", ");
        const message = `unknown project ${named}; known: ${authorizer.projects.join(", ")}; nothing was stored`;
        if (authorizer.enabled) {
          noteAudit(c, { action: "create", project: projects.join(","), reason: message });
          recordAudit(deps, c, caller.identity, caller.address, "denied", 400);
        }
        throw new HttpError(400, "unknown_project", message, {
          projects,
          alerts: unknown.map((u) => ({
            fingerprint: u.alert.fingerprint ?? null,
            project: u.placement.project,
          })),
          known_projects: [...authorizer.projects],
        });
      }
      if (!authorizer.enabled) return;
      const forbidden = [
        ...new Set(
          placed
            .filter((p) => p.placement.refused === "forbidden_project")
            .map((p) => p.placement.project),
        ),
      ];
      if (forbidden.length === 0) return;
      const message = `${caller.identity.user} may not create sessions in project ${forbidden.join(", ")}; nothing was stored`;
      noteAudit(c, { action: "create", project: forbidden.join(","), reason: message });
      recordAudit(deps, c, caller.identity, caller.address, "denied", 403);
      throw new HttpError(403, "forbidden", message, { projects: forbidden });
    },
    audit(c, caller, result) {
      if (!authorizer.enabled) return;
      const refused = new Set(
        result.alerts_skipped
          .filter((s) => s.reason === "unknown_project" || s.reason === "forbidden_project")
          .map((s) => `${s.reason}:${s.project ?? ""}`),
      );
      for (const key of refused) {
        const [reason = "", project = ""] = key.split(":");
        noteAudit(c, { action: "create", project, reason });
        recordAudit(deps, c, caller.identity, caller.address, "denied", 403);
      }
      const projects = [...new Set(result.sessions_created.map((s) => s.project))];
      noteAudit(c, {
        action: "create",
        project: projects.join(",") || undefined,
        sessionId:
          result.sessions_created.length === 1 ? result.sessions_created[0]?.session_id : undefined,
        reason: `${result.sessions_created.length} session(s) created, ${result.alerts_skipped.length} alert(s) skipped`,
      });
      recordAudit(deps, c, caller.identity, caller.address, "allowed", 200);
    },
  };
}

/**
 * What start-up should warn about the webhook while authorization is on: it has no
 * credentials, so it is either open by the operator's choice or refuses every notification
 * that carries no API token. Undefined when there is nothing to say.
 */
export function receiverStartWarning(
  deps: Pick<IngestResources, "config" | "settings">,
): string | undefined {
  const { enabled, alertmanager } = deps.config.authorization;
  if (!enabled || deps.settings.alertmanager.auth.kind !== "none") return undefined;
  return alertmanager.allow_unauthenticated
    ? `authorization.alertmanager.allow_unauthenticated is set: anyone who reaches ingest-api can submit Alertmanager notifications as ${alertmanager.identity}; set ALERTMANAGER_BEARER_TOKEN (or ALERTMANAGER_BASIC_USER/PASSWORD) instead`
    : "authorization is on and the Alertmanager webhook has no credentials: it refuses every notification without an API token (401); set ALERTMANAGER_BEARER_TOKEN (or ALERTMANAGER_BASIC_USER/PASSWORD)";
}
