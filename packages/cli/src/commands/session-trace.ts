import {
  LLMInteractionDetailSchema,
  MCPInteractionDetailSchema,
  TraceListResponseSchema,
} from "@tarsy/contracts";
import { callApi } from "../api.ts";
import {
  type Command,
  EXIT,
  HELP_OPTION,
  jsonText,
  OUTPUT_OPTIONS,
  outputFormat,
  parseCommandArgs,
  UsageError,
} from "../command.ts";
import { formatLlmInteraction, formatMcpInteraction, formatTrace } from "./trace-format.ts";

const USAGE = `Usage: tarsy session trace <session-id> [--llm ID | --mcp ID] [--output json]

Without --llm or --mcp: the session's interaction tree (GET /api/v1/sessions/:id/trace):
stages, their agent executions, and each execution's LLM and MCP interactions in order,
with ids, durations, tokens and tool names. With an interaction's id: that interaction in
full.

Options:
      --llm ID          one LLM interaction: the conversation as sent and the response
      --mcp ID          one MCP interaction: the tool call's arguments and result
  -o, --output FORMAT   text or json (the API's answer)
      --json            same as --output json
  -h, --help            show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

const OPTIONS = {
  llm: { type: "string" },
  mcp: { type: "string" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

export const sessionTraceCommand: Command = {
  path: ["session", "trace"],
  summary: "print a session's LLM and MCP interactions, or one of them in full",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, USAGE, OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length !== 1) throw new UsageError("give exactly one session id");
    if (values.llm !== undefined && values.mcp !== undefined) {
      throw new UsageError("give --llm or --mcp, not both");
    }
    const id = positionals[0] as string;
    const base = `/api/v1/sessions/${encodeURIComponent(id)}/trace`;
    if (values.llm !== undefined) {
      const detail = await callApi(env, {
        method: "GET",
        path: `${base}/llm/${encodeURIComponent(values.llm)}`,
        schema: LLMInteractionDetailSchema,
      });
      io.out(format === "json" ? jsonText(detail) : formatLlmInteraction(detail));
      return EXIT.ok;
    }
    if (values.mcp !== undefined) {
      const detail = await callApi(env, {
        method: "GET",
        path: `${base}/mcp/${encodeURIComponent(values.mcp)}`,
        schema: MCPInteractionDetailSchema,
      });
      io.out(format === "json" ? jsonText(detail) : formatMcpInteraction(detail));
      return EXIT.ok;
    }
    const trace = await callApi(env, {
      method: "GET",
      path: base,
      schema: TraceListResponseSchema,
    });
    io.out(format === "json" ? jsonText(trace) : formatTrace(id, trace));
    return EXIT.ok;
  },
};
