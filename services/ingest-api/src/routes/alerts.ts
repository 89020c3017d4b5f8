import { findChainForAlertType, listAlertTypes, type TarsyConfig } from "@tarsy/config";
import {
  AlertSubmitRequestSchema,
  type AlertSubmitResponse,
  type McpSelection,
} from "@tarsy/contracts";
import { createSession } from "@tarsy/db";
import { type Context, Hono } from "hono";
import { identityOf } from "../access.ts";
import { type AlertsReceived, countFailedAlerts } from "../alert-metrics.ts";
import { noteAudit } from "../authz/audit.ts";
import { requireAction, requireKnownProject } from "../authz/guard.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError } from "../errors.ts";
import { enforcePendingLimit } from "../pending-limit.ts";
import { authorOf, readJson } from "../request.ts";
import { deliverSession, maskAlertData } from "../submit.ts";
import { sealedUserTokenOf } from "../user-token.ts";

/** Room for the envelope around `data` (runbook, mcp selection, JSON framing). */
const ENVELOPE_BYTES = 64 * 1024;

export function alertRoutes(deps: IngestResources, received: AlertsReceived): Hono {
  const app = new Hono();

  app.post("/", countFailedAlerts(received, "api"), async (c) => {
    const limit = deps.settings.maxAlertBytes;
    const body = await readJson(c, AlertSubmitRequestSchema, {
      limit: limit + ENVELOPE_BYTES,
      maxDepth: deps.settings.maxJsonDepth,
    });
    const text = typeof body.data === "string" ? body.data : JSON.stringify(body.data);
    const size = Buffer.byteLength(text, "utf8");
    if (size > limit) {
      throw new HttpError(
        413,
        "payload_too_large",
        `alert data is ${size} bytes; at most ${limit}`,
        {
          limit,
          size,
        },
      );
    }
    const project = projectOf(deps, c, body.project);
    // Fail-closed: a runbook TARSy will not fetch is refused before anything is stored.
    if (body.runbook) checkRunbookUrl(deps, body.runbook);
    const alertType = body.alert_type ?? deps.config.defaults.alert_type;
    const chain = chainFor(deps.config, alertType);
    const selection = body.mcp ?? body.mcp_selection;
    if (selection) await validateSelection(deps, selection);
    await enforcePendingLimit(deps, c, alertType);

    const masked = maskAlertData(deps, text);
    const created = await createSession(deps.prisma, {
      alertData: masked.data,
      alertType,
      chainId: chain.id,
      author: authorOf(c),
      project,
      runbookUrl: body.runbook ?? null,
      mcpSelection: selection ?? null,
      slackMessageFingerprint: body.slack_message_fingerprint
        ? maskAlertData(deps, body.slack_message_fingerprint).data
        : null,
      userToken: sealedUserTokenOf(deps, c),
    });
    noteAudit(c, { sessionId: created.session.id });
    await deliverSession(deps, created);
    received.inc({ source: "api", status: "accepted" });
    deps.logger.info(
      { session_id: created.session.id, alert_type: alertType, chain_id: chain.id },
      "alert accepted",
    );
    const response: AlertSubmitResponse = { session_id: created.session.id, status: "queued" };
    return c.json(response, 202);
  });

  return app;
}

/**
 * The session's project: the one named, else an API token's own project, else
 * `authorization.default_project`; unknown is a 400, one the caller may not create in a 403.
 */
function projectOf(deps: IngestResources, c: Context, named: string | undefined): string {
  const identity = identityOf(c);
  const project =
    named ?? (identity.source === "token" && identity.token ? identity.token.project : undefined);
  const chosen = project ?? deps.access.authorizer.defaultProject;
  requireKnownProject(deps, chosen);
  requireAction(deps, c, "create", chosen);
  return chosen;
}

/** 400 `invalid runbook URL` when the URL is outside `system.runbooks.allowed_domains`. */
function checkRunbookUrl(deps: IngestResources, url: string): void {
  const problem = deps.runbooks.problem(url);
  if (!problem) return;
  throw new HttpError(400, "validation_failed", "invalid runbook URL", {
    fields: [{ path: "runbook", message: problem }],
  });
}

/** The chain of an alert type; an unknown type is a 400 that lists the known ones. */
export function chainFor(config: TarsyConfig, alertType: string) {
  const chain = findChainForAlertType(config, alertType);
  if (chain) return chain;
  const known = listAlertTypes(config);
  throw new HttpError(
    400,
    "unknown_alert_type",
    `unknown alert type '${alertType}'; known alert types: ${known.join(", ")}`,
    { alert_type: alertType, known_alert_types: known },
  );
}

/**
 * Every server of the override must be configured (400 naming the unknown ones). Tool names
 * are checked against the gateway's tool lists when the gateway answers; the orchestrator
 * checks the selection again at execution time.
 */
async function validateSelection(deps: IngestResources, selection: McpSelection): Promise<void> {
  const known = [...deps.config.mcpServers.keys()].sort();
  const unknown = selection.servers.map((s) => s.name).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new HttpError(
      400,
      "unknown_mcp_server",
      `unknown MCP server(s): ${unknown.join(", ")}; configured: ${known.join(", ")}`,
      { unknown_servers: unknown, known_servers: known },
    );
  }
  const wanted = selection.servers.filter((s) => s.tools && s.tools.length > 0);
  if (wanted.length === 0 || !deps.gateway) return;
  let lists: Map<string, string[]>;
  try {
    const reply = await deps.gateway.serverTools();
    lists = new Map(reply.servers.map((s) => [s.server, s.tools.map((t) => t.tool)]));
  } catch (err) {
    deps.logger.warn({ err }, "gateway tool lists unavailable; tool names not checked");
    return;
  }
  const unknownTools: { server: string; tool: string }[] = [];
  for (const server of wanted) {
    const tools = lists.get(server.name);
    if (!tools || tools.length === 0) continue; // not listed yet (server down): checked later
    for (const tool of server.tools ?? []) {
      if (!tools.includes(tool)) unknownTools.push({ server: server.name, tool });
    }
  }
  if (unknownTools.length > 0) {
    throw new HttpError(
      400,
      "unknown_mcp_tool",
      `unknown MCP tool(s): ${unknownTools.map((t) => `${t.server}.${t.tool}`).join(", ")}`,
      { unknown_tools: unknownTools },
    );
  }
}
