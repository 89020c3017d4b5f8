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
  /** The webhook's own credentials, or an API token as its bearer (401 otherwise). */
  authenticate: MiddlewareHandler;
  of(c: Context): ReceiverCaller;
  /** An alert's project: its label's (`project_label`), else the receiver's or the token's. */
  place(caller: ReceiverCaller, labels: Record<string, string>): Placement;
  /** One audit entry for the notification, one denial per refused project. */
  audit(c: Context, caller: ReceiverCaller, result: AlertmanagerIntakeResponse): void;
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
    c.set(CALLER as never, { identity: receiverIdentity(config), address } as never);
    return webhookAuth(c, next);
  };
  return {
    authenticate,
    of: (c) => c.get(CALLER as never) as ReceiverCaller,
    place(caller, labels) {
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
