import type { McpServerConfig } from "@tarsy/config";
import { type MaskingService, TOOL_RESULT_REDACTED_NOTICE } from "@tarsy/masking";

export interface MaskedContent {
  content: string;
  redactions: number;
}

/**
 * Masks a tool result with its server's settings. Fail-closed twice over: the masking service
 * replaces content it cannot process with a notice, and anything it throws does the same here.
 */
export function maskToolContent(
  masking: MaskingService,
  server: McpServerConfig | undefined,
  content: string,
  tool: string,
): MaskedContent {
  try {
    const result = masking.maskToolResult(content, server?.data_masking, {
      ...(server ? { serverId: server.id } : {}),
      toolName: tool,
    });
    return { content: result.content, redactions: result.redactions };
  } catch {
    return { content: TOOL_RESULT_REDACTED_NOTICE, redactions: 1 };
  }
}
