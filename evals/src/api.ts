/** The few TARSy HTTP API calls the harness makes, each answer checked with the contracts' schemas. */

import {
  MCPInteractionDetailSchema,
  SessionDetailSchema,
  TraceListResponseSchema,
} from "@tarsy/contracts";
import { z } from "zod";

const SubmitResponseSchema = z.object({ session_id: z.string() });

export class ApiError extends Error {
  readonly code = "api_error" as const;
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export interface TarsyApi {
  submitAlert(body: Record<string, unknown>): Promise<string>;
  session(id: string): Promise<z.infer<typeof SessionDetailSchema>>;
  trace(id: string): Promise<z.infer<typeof TraceListResponseSchema>>;
  mcpInteraction(id: string, iid: string): Promise<z.infer<typeof MCPInteractionDetailSchema>>;
  /** The raw LLM interaction detail (`/trace/llm/:iid`). */
  llmInteraction(id: string, iid: string): Promise<unknown>;
}

export function createTarsyApi(baseUrl: string): TarsyApi {
  const call = async <T>(path: string, schema: z.ZodType<T>, init?: RequestInit): Promise<T> => {
    const response = await fetch(`${baseUrl}${path}`, {
      ...init,
      headers: { "content-type": "application/json" },
    });
    const text = await response.text();
    if (!response.ok)
      throw new ApiError(`${path}: HTTP ${response.status} ${text}`, response.status);
    return schema.parse(JSON.parse(text));
  };
  return {
    async submitAlert(body) {
      const r = await call("/api/v1/alerts", SubmitResponseSchema, {
        method: "POST",
        body: JSON.stringify(body),
      });
      return r.session_id;
    },
    session: (id) => call(`/api/v1/sessions/${id}`, SessionDetailSchema),
    trace: (id) => call(`/api/v1/sessions/${id}/trace`, TraceListResponseSchema),
    mcpInteraction: (id, iid) =>
      call(`/api/v1/sessions/${id}/trace/mcp/${iid}`, MCPInteractionDetailSchema),
    llmInteraction: (id, iid) => call(`/api/v1/sessions/${id}/trace/llm/${iid}`, z.unknown()),
  };
}
