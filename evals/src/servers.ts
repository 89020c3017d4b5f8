import { readFileSync } from "node:fs";
import { z } from "zod";

export const ToolSchemaSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(""),
  inputSchema: z.object({ type: z.literal("object") }).loose(),
  /** The server's MCP annotations (`readOnlyHint`…), which decide who may call the tool. */
  annotations: z
    .object({
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    })
    .optional(),
});
export type ToolSchema = z.infer<typeof ToolSchemaSchema>;

/** `servers.json`: each replayed MCP server's name, instructions and tools (original schemas). */
export const ServerCatalogSchema = z.object({
  servers: z.record(
    z.string().regex(/^\w[\w-]{0,127}$/),
    z.object({ instructions: z.string().default(""), tools: z.array(ToolSchemaSchema).min(1) }),
  ),
});
export type ServerCatalog = z.infer<typeof ServerCatalogSchema>;

export function loadServerCatalog(path: string): ServerCatalog {
  return ServerCatalogSchema.parse(JSON.parse(readFileSync(path, "utf8")));
}

export function hasTool(catalog: ServerCatalog, server: string, tool: string): boolean {
  return catalog.servers[server]?.tools.some((t) => t.name === tool) ?? false;
}
