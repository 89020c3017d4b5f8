import type { z } from "zod";
import { callApi } from "../api.ts";
import {
  type Command,
  type CommandOptions,
  EXIT,
  HELP_OPTION,
  jsonText,
  OUTPUT_OPTIONS,
  outputFormat,
  parseCommandArgs,
  UsageError,
} from "../command.ts";
import { ApiRequestError } from "../errors.ts";

const OPTIONS = { ...OUTPUT_OPTIONS, ...HELP_OPTION } as const;

/** The option lines every session action's usage ends with. */
export const SESSION_ACTION_OPTIONS = `Options:
  -o, --output FORMAT   text or json (the API's answer)
      --json            same as --output json
  -h, --help            show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

export interface SessionAction<S extends z.ZodType> {
  /** e.g. `cancel`: the command is `tarsy session <verb> <session-id>`. */
  verb: string;
  summary: string;
  usage: string;
  method: "POST" | "DELETE";
  /** The route's path after `/api/v1/sessions/<id>` (e.g. `/cancel`, or ``). */
  suffix: string;
  schema: S;
  /** The text line printed for the API's answer. */
  describe(answer: z.infer<S>): string;
  /** What a 409 means for this action, before the API's message. */
  conflict: string;
  /** The action's own options (each in `usage`), besides the output and help ones. */
  options?: CommandOptions;
  /** The request body from the parsed options (throws UsageError for a bad one), if any. */
  body?(values: Record<string, unknown>): unknown;
}

/**
 * A command that makes one state-changing call on one session and prints the API's answer:
 * exit 0 done; 1 no such session, a 409 (said as `conflict`), or the API unreachable.
 */
export function sessionActionCommand<S extends z.ZodType>(action: SessionAction<S>): Command {
  const name = `tarsy session ${action.verb}`;
  const options = { ...action.options, ...OPTIONS };
  return {
    path: ["session", action.verb],
    summary: action.summary,
    usage: action.usage,
    options,
    async run({ args, env, io }) {
      const parsed = parseCommandArgs({ args, io }, action.usage, options);
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      const format = outputFormat(values);
      if (positionals.length !== 1) throw new UsageError("give exactly one session id");
      const id = positionals[0] as string;
      const body = action.body?.(values);
      try {
        const answer = await callApi(env, {
          method: action.method,
          path: `/api/v1/sessions/${encodeURIComponent(id)}${action.suffix}`,
          schema: action.schema,
          ...(body !== undefined && { body }),
        });
        io.out(format === "json" ? jsonText(answer) : `${action.describe(answer)}\n`);
        return EXIT.ok;
      } catch (error) {
        if (!(error instanceof ApiRequestError)) throw error;
        if (error.status === 404) {
          io.err(`${name}: no session ${id} (${error.message})\n`);
          return EXIT.failed;
        }
        if (error.status === 409) {
          io.err(`${name}: ${action.conflict}: ${error.apiMessage}\n`);
          return EXIT.failed;
        }
        throw error;
      }
    },
  };
}
