import { z } from "zod";

/** A user-defined regex pattern from an MCP server's `data_masking.custom_patterns`. */
export const CustomMaskingPatternSchema = z.object({
  name: z.string().min(1),
  pattern: z.string().min(1),
  replacement: z.string(),
  description: z.string().optional(),
});
export type CustomMaskingPattern = z.infer<typeof CustomMaskingPatternSchema>;

/** Per-MCP-server masking settings (`mcp_servers.<id>.data_masking`). */
export const ServerMaskingConfigSchema = z.object({
  enabled: z.boolean(),
  pattern_groups: z.array(z.string()).default([]),
  patterns: z.array(z.string()).default([]),
  custom_patterns: z.array(CustomMaskingPatternSchema).default([]),
});
export type ServerMaskingConfig = z.input<typeof ServerMaskingConfigSchema>;

/** Alert payload masking settings (`defaults.alert_masking`). */
export const AlertMaskingConfigSchema = z.object({
  enabled: z.boolean().default(true),
  pattern_group: z.string().min(1).default("security"),
});
export type AlertMaskingConfig = z.input<typeof AlertMaskingConfigSchema>;

/** A regex masking pattern definition: the shape of every built-in. */
export interface MaskingPatternDefinition {
  /** Regular expression source. A leading inline flag group such as `(?i)` or `(?is)` is honoured. */
  pattern: string;
  /** Replacement text; `$1`, `${1}`, `$<name>`, `$&` and `$$` refer to the match. */
  replacement: string;
  description: string;
}
