import { z } from "zod";
import { IdSchema, JsonObjectSchema, TimestampSchema, V1 } from "./common.ts";

/**
 * The mcp-gateway request/reply API (a NATS service, discoverable with `$SRV.PING|INFO|STATS`).
 *
 * Affinity: an execution's MCP sessions live on one gateway replica. The first request of an
 * execution goes to the shared subject (`mcp.gateway.<method>`, one queue group); its reply
 * names the replica, and later requests go to `mcp.gateway.replica.<replica>.<method>`. Every
 * execution-scoped request carries the execution's scope (servers, tool filters), so any replica
 * can open the execution again when the one holding it is gone.
 */

/** A request/reply method: relative subject tail plus the schemas of both directions. */
export interface RpcMethodDef<
  Req extends z.ZodType = z.ZodType,
  Rep extends z.ZodType = z.ZodType,
> {
  readonly method: string;
  readonly request: Req;
  readonly reply: Rep;
}

const ServerIdSchema = z
  .string()
  .regex(/^\w[\w-]*$/, "server ids hold letters, digits, '_' and '-'")
  .max(128);

/** The replica that answered, and where to send the execution's later requests (relative). */
export const McpReplicaRefSchema = z.object({
  id: IdSchema,
  subject_prefix: z.string().min(1),
});
export type McpReplicaRef = z.infer<typeof McpReplicaRefSchema>;

/** What an execution may use: its resolved servers and, per server, an optional tool filter. */
export const McpExecutionScopeSchema = z.object({
  execution_id: IdSchema,
  session_id: IdSchema.optional(),
  servers: z.array(ServerIdSchema).max(64),
  /** server → allowed tool names; a server absent here (or with an empty list) allows all. */
  tool_filters: z.record(ServerIdSchema, z.array(z.string().min(1))).default({}),
  /**
   * Whether the execution may see and call mutating tools (those that may change what they
   * reach; see `McpToolDefinition.mutating`). Only `type: action` agents may; the gateway
   * neither lists nor runs a mutating tool for any other execution.
   */
  allow_mutating: z.boolean().default(false),
});
export type McpExecutionScope = z.input<typeof McpExecutionScopeSchema>;

/** Where a tool's class came from: its MCP annotations, `mcp_servers.<id>.tools`, or neither. */
export const ToolClassSourceSchema = z.enum(["annotations", "config", "default"]);
export type ToolClassSource = z.infer<typeof ToolClassSourceSchema>;

export const McpToolDefinitionSchema = z.object({
  /** Canonical `server.tool`. */
  name: z.string().min(3),
  server: ServerIdSchema,
  tool: z.string().min(1),
  description: z.string(),
  input_schema: JsonObjectSchema,
  /**
   * May change what the tool reaches (a cluster, a ticket, a file). From the server's
   * `readOnlyHint` annotation, unless `mcp_servers.<id>.tools` overrides it; a tool with
   * neither counts as mutating (the MCP default).
   */
  mutating: z.boolean().default(true),
  /** What decided `mutating`: the server's annotations, the config, or neither. */
  mutating_source: ToolClassSourceSchema.default("default"),
  /** A mutating tool whose calls have a dry-run form (`mcp_servers.<id>.tools.<t>.dry_run`). */
  dry_run: z.boolean().default(false),
});
export type McpToolDefinition = z.infer<typeof McpToolDefinitionSchema>;

export const McpListToolsRequestSchema = McpExecutionScopeSchema.extend({ v: V1 });
export type McpListToolsRequest = z.input<typeof McpListToolsRequestSchema>;
export const McpListToolsReplySchema = z.object({
  v: V1,
  replica: McpReplicaRefSchema,
  tools: z.array(McpToolDefinitionSchema),
  /** Servers of the scope that could not be used, with why (tell the LLM). */
  failed_servers: z.record(z.string(), z.string()),
});
export type McpListToolsReply = z.infer<typeof McpListToolsReplySchema>;

export const McpCallToolRequestSchema = McpExecutionScopeSchema.extend({
  v: V1,
  call_id: z.string().max(256).optional(),
  /** `server.tool` (ReAct) or `server__tool` (function calling). */
  name: z.string().min(1).max(512),
  /** The raw ActionInput or function-call arguments; parsed by the gateway's cascade. */
  arguments: z.string().max(1_000_000).default(""),
  /**
   * A mutating call's approved action request: the gateway runs the call only when this
   * request is approved, is this execution's call of this tool with these arguments, and was
   * never started (its id is the call's idempotency key).
   */
  approval_id: z.uuid().optional(),
  /**
   * Run the call's configured dry-run form instead of the call (shown on its approval
   * request): never the call itself; refused when the tool has no dry-run form.
   */
  dry_run: z.boolean().default(false),
});
export type McpCallToolRequest = z.input<typeof McpCallToolRequestSchema>;
export const McpCallToolReplySchema = z.object({
  v: V1,
  replica: McpReplicaRefSchema,
  call_id: z.string().optional(),
  name: z.string(),
  server: z.string().optional(),
  tool: z.string().optional(),
  /** The parsed arguments sent to the server (absent when the call never got that far). */
  arguments: JsonObjectSchema.optional(),
  /** Text for the LLM: masked, and cut below the NATS max payload when needed. */
  content: z.string(),
  is_error: z.boolean(),
  /**
   * Who wrote `content`: the MCP server (its result or an error echoing it: untrusted data),
   * or the gateway itself (a refusal or routing error: never sent to a server).
   */
  source: z.enum(["server", "gateway"]).default("server"),
  truncated: z.boolean(),
  /** Secrets the masking replaced in this result. */
  redactions: z.number().int().nonnegative(),
  duration_ms: z.number().nonnegative(),
});
export type McpCallToolReply = z.infer<typeof McpCallToolReplySchema>;

export const McpReleaseRequestSchema = z.object({ v: V1, execution_id: IdSchema });
export type McpReleaseRequest = z.input<typeof McpReleaseRequestSchema>;
export const McpReleaseReplySchema = z.object({
  v: V1,
  replica: McpReplicaRefSchema,
  released: z.boolean(),
  closed_sessions: z.number().int().nonnegative(),
});
export type McpReleaseReply = z.infer<typeof McpReleaseReplySchema>;

export const McpEmptyRequestSchema = z.object({ v: V1 });
export type McpEmptyRequest = z.input<typeof McpEmptyRequestSchema>;

export const McpServerHealthSchema = z.object({
  server: z.string(),
  healthy: z.boolean(),
  /** Initialized at least once since the replica started. */
  initialized: z.boolean(),
  error: z.string().optional(),
  tool_count: z.number().int().nonnegative(),
  last_check: TimestampSchema.optional(),
});
export type McpServerHealth = z.infer<typeof McpServerHealthSchema>;

export const McpHealthReplySchema = z.object({
  v: V1,
  replica: McpReplicaRefSchema,
  /** Every configured server initialized at least once. */
  ready: z.boolean(),
  /** Why not ready, naming the servers. */
  not_ready_reason: z.string().optional(),
  /** Every configured server healthy at the last check. */
  healthy: z.boolean(),
  servers: z.array(McpServerHealthSchema),
  open_executions: z.number().int().nonnegative(),
});
export type McpHealthReply = z.infer<typeof McpHealthReplySchema>;

export const SystemWarningSchema = z.object({
  id: z.string(),
  category: z.enum(["mcp_health"]),
  server_id: z.string().optional(),
  message: z.string(),
  details: z.string().optional(),
  created_at: TimestampSchema,
});
export type SystemWarning = z.infer<typeof SystemWarningSchema>;

export const McpWarningsReplySchema = z.object({
  v: V1,
  replica: McpReplicaRefSchema,
  warnings: z.array(SystemWarningSchema),
});
export type McpWarningsReply = z.infer<typeof McpWarningsReplySchema>;

/** The health monitor's cached tool list per configured server (for GET /api/v1/system/mcp-servers). */
export const McpServerToolsReplySchema = z.object({
  v: V1,
  replica: McpReplicaRefSchema,
  servers: z.array(
    z.object({
      server: z.string(),
      healthy: z.boolean(),
      tools: z.array(McpToolDefinitionSchema),
    }),
  ),
});
export type McpServerToolsReply = z.infer<typeof McpServerToolsReplySchema>;

/** The body of a gateway error reply (also carried in the NATS service error headers). */
export const McpGatewayErrorCodeSchema = z.enum(["bad_request", "internal", "reply_too_large"]);
export type McpGatewayErrorCode = z.infer<typeof McpGatewayErrorCodeSchema>;

const rpc = <Req extends z.ZodType, Rep extends z.ZodType>(def: RpcMethodDef<Req, Rep>) => def;

export const MCP_GATEWAY = {
  service: { name: "tarsy-mcp-gateway", version: "1.0.0" },
  /** Queue group of the shared subjects. */
  queue: "mcp-gateway",
  /** Shared subjects live under this (relative) prefix. */
  subjectPrefix: "mcp.gateway",
  methods: {
    listTools: rpc({
      method: "tools.list",
      request: McpListToolsRequestSchema,
      reply: McpListToolsReplySchema,
    }),
    callTool: rpc({
      method: "tools.call",
      request: McpCallToolRequestSchema,
      reply: McpCallToolReplySchema,
    }),
    release: rpc({
      method: "executions.release",
      request: McpReleaseRequestSchema,
      reply: McpReleaseReplySchema,
    }),
    health: rpc({ method: "health", request: McpEmptyRequestSchema, reply: McpHealthReplySchema }),
    warnings: rpc({
      method: "warnings",
      request: McpEmptyRequestSchema,
      reply: McpWarningsReplySchema,
    }),
    serverTools: rpc({
      method: "servers.tools",
      request: McpEmptyRequestSchema,
      reply: McpServerToolsReplySchema,
    }),
  },
} as const;
export type McpGatewayMethodKey = keyof typeof MCP_GATEWAY.methods;

/** Relative subject prefix of one replica's own endpoints. */
export const mcpReplicaSubjectPrefix = (replicaId: string): string =>
  `${MCP_GATEWAY.subjectPrefix}.replica.${replicaId}`;
