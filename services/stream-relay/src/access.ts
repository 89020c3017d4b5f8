import type { IncomingMessage } from "node:http";
import type { Authorizer, Identity } from "@tarsy/authz";
import type { ProjectOf, SessionProjects } from "./session-projects.ts";

/** Who opened a WebSocket, or why the upgrade is refused with a 401. */
export type UpgradeIdentity =
  | { ok: true; identity: Identity }
  | { ok: false; code: string; message: string };

/**
 * Who a WebSocket client is and which sessions it may see (`createRelayAccess`), used only
 * while authorization is enabled; the relay skips all of it otherwise.
 */
export interface RelayAccess {
  authorizer: Authorizer;
  projects: SessionProjects;
  /**
   * The identity of an upgrade request by the rules of the HTTP API: proxy headers only from
   * a trusted proxy, an API token as bearer or in the `tarsy_token` cookie; nobody is refused.
   * Rejects only when the identity could not be checked (e.g. the database is down).
   */
  identify(req: IncomingMessage): Promise<UpgradeIdentity>;
  /**
   * Appends a refused upgrade to the audit log (who is not known: `anonymous`; what, from
   * where, when, why). Never throws and is not waited for: a refusal is not held up by it.
   */
  auditRefusal(refusal: UpgradeRefusal): void;
}

/** A WebSocket upgrade the relay refused, as the audit log records it. */
export interface UpgradeRefusal {
  status: 401 | 503;
  code: string;
  message: string;
  path: string;
  remoteAddress: string | undefined;
}

/** Why a frame about a session was withheld from a client. */
export type FilterReason = "forbidden" | "unknown_session";

/** Most per-session answers a connection remembers before starting over. */
const MAX_REMEMBERED = 4_096;

/**
 * One connection's view: whether it may `get` a session, asked of the authorizer once per
 * session (a session's project never changes, nor does the connection's identity).
 */
export class SessionVisibility {
  private readonly answers = new Map<string, boolean>();

  constructor(
    private readonly authorizer: Authorizer,
    private readonly identity: Identity,
  ) {}

  /** `null` when the frame may go out, else why not. */
  check(sessionId: string, project: ProjectOf): FilterReason | null {
    if (project === null) return "unknown_session";
    let allowed = this.answers.get(sessionId);
    if (allowed === undefined) {
      allowed = this.authorizer.can(this.identity, "get", project, sessionId);
      if (this.answers.size >= MAX_REMEMBERED) this.answers.clear();
      this.answers.set(sessionId, allowed);
    }
    return allowed ? null : "forbidden";
  }
}
