/**
 * Resuming interrupted executions (#25): `queue.resume_interrupted` and an MCP server's
 * `idempotent`, their defaults, and what is an error.
 */
import { describe, expect, it } from "vitest";
import { load, loadIssues } from "./helpers.ts";

const SERVERS = `
mcp_servers:
  reader:
    transport: { type: stdio, command: "true" }
  admin:
    idempotent: false
    transport: { type: stdio, command: "true" }
`;

describe("queue.resume_interrupted and mcp_servers.*.idempotent", () => {
  it("default: resuming on, every server's calls may run again", () => {
    const { config } = load({ tarsy: SERVERS.replace("    idempotent: false\n", "") });
    expect(config.queue.resume_interrupted).toBe(true);
    expect(config.mcpServers.get("admin")?.idempotent).toBeUndefined();
  });

  it("read as written", () => {
    const { config, warnings } = load({ tarsy: `queue:\n  resume_interrupted: false\n${SERVERS}` });
    expect(config.queue.resume_interrupted).toBe(false);
    expect(config.mcpServers.get("admin")?.idempotent).toBe(false);
    expect(config.mcpServers.get("reader")?.idempotent).toBeUndefined();
    expect(warnings.filter((w) => /resume|idempotent/.test(w.path))).toEqual([]);
  });

  it("a value that is not a boolean is an error at its file, path and line", () => {
    const issues = loadIssues({
      tarsy: `queue:\n  resume_interrupted: "yes"\n${SERVERS.replace("idempotent: false", "idempotent: 0")}`,
    });
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "queue.resume_interrupted",
        line: 2,
        message: "expected boolean, received string",
      },
      {
        file: "tarsy.yaml",
        path: "mcp_servers.admin.idempotent",
        line: 8,
        message: "expected boolean, received number",
      },
    ]);
  });
});
