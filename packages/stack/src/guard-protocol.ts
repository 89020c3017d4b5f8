import { z } from "zod";

export const GuardSignalSchema = z.enum(["SIGTERM", "SIGINT", "SIGKILL", "SIGQUIT", "SIGHUP"]);
export type GuardSignal = z.infer<typeof GuardSignalSchema>;

/** What the stack tells its guardian, one JSON object a line. */
export const GuardCommandSchema = z.union([
  z.object({
    watch: z.number().int().positive(),
    signal: GuardSignalSchema,
    phase: z.number().int(),
  }),
  z.object({ forget: z.number().int().positive() }),
  z.object({ dir: z.string().min(1) }),
]);
export type GuardCommand = z.infer<typeof GuardCommandSchema>;
