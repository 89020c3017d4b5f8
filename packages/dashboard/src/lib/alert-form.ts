import type { AlertSubmitRequest, McpSelection } from "@tarsy/contracts";

export interface AlertFormInput {
  alertType: string;
  format: "json" | "text";
  data: string;
  runbook: string;
  /** One line per server: `server` or `server: tool1, tool2`. Empty: the chain's servers. */
  mcpOverride: string;
  /** The project the session goes to (empty: the server's default). */
  project?: string;
}

export type AlertFormResult =
  | { ok: true; request: AlertSubmitRequest }
  | { ok: false; errors: Partial<Record<"data" | "runbook" | "mcpOverride", string>> };

function parseMcpOverride(text: string): McpSelection | string | null {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0) return null;
  const servers: McpSelection["servers"] = [];
  for (const line of lines) {
    const [name = "", tools] = line.split(":", 2).map((p) => p.trim());
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) return `not a server name: "${name}"`;
    const toolList = (tools ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
    servers.push(toolList.length ? { name, tools: toolList } : { name });
  }
  return { servers };
}

/** Validates the submit form before anything is sent; the request it builds is the API body. */
export function buildAlertRequest(input: AlertFormInput): AlertFormResult {
  const errors: Partial<Record<"data" | "runbook" | "mcpOverride", string>> = {};
  let data: AlertSubmitRequest["data"] | undefined;
  if (!input.data.trim()) {
    errors.data = "Alert data is required";
  } else if (input.format === "json") {
    try {
      const value: unknown = JSON.parse(input.data);
      if (value === null || typeof value !== "object") {
        errors.data = "JSON alert data must be an object or an array";
      } else {
        data = value as AlertSubmitRequest["data"];
      }
    } catch (err) {
      errors.data = `Not valid JSON: ${(err as Error).message}`;
    }
  } else {
    data = input.data;
  }
  let runbook: string | undefined;
  if (input.runbook.trim()) {
    try {
      const url = new URL(input.runbook.trim());
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        errors.runbook = "Runbook URL must be http(s)";
      } else {
        runbook = url.toString();
      }
    } catch {
      errors.runbook = "Runbook URL is not a valid URL";
    }
  }
  const mcp = parseMcpOverride(input.mcpOverride);
  if (typeof mcp === "string") errors.mcpOverride = mcp;
  if (Object.keys(errors).length > 0 || data === undefined) return { ok: false, errors };
  const request: AlertSubmitRequest = { data };
  if (input.alertType) request.alert_type = input.alertType;
  if (input.project) request.project = input.project;
  if (runbook) request.runbook = runbook;
  if (mcp && typeof mcp !== "string") request.mcp = mcp;
  return { ok: true, request };
}

/** A runbook's name in the picker: its path in the repository (after `/blob/{ref}/`). */
export function runbookLabel(url: string): string {
  try {
    const parts = new URL(url).pathname.split("/").filter(Boolean);
    const blob = parts.indexOf("blob");
    const path = blob >= 0 ? parts.slice(blob + 2) : parts.slice(-1);
    return decodeURIComponent(path.join("/")) || url;
  } catch {
    return url;
  }
}

/** The message of a server-side refusal of the runbook field (e.g. a host not allowed). */
export function runbookFieldError(details: unknown, message: string): string | undefined {
  const fields = (details as { fields?: { path?: unknown; message?: unknown }[] } | undefined)
    ?.fields;
  const field = Array.isArray(fields) ? fields.find((f) => f.path === "runbook") : undefined;
  if (!field) return undefined;
  return typeof field.message === "string" ? `${message}: ${field.message}` : message;
}
