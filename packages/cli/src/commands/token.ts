import { parseArgs } from "node:util";
import {
  ApiTokenCreatedSchema,
  type ApiTokenInfo,
  ApiTokenListResponseSchema,
} from "@tarsy/contracts";
import { z } from "zod";
import { callApi } from "../api.ts";
import {
  type Command,
  EXIT,
  HELP_OPTION,
  jsonText,
  OUTPUT_OPTIONS,
  outputFormat,
  parseCommandArgs,
  positionalArgs,
  UsageError,
} from "../command.ts";

const ENV_NOTE = "Environment: TARSY_API_URL, TARSY_TOKEN (sent as Authorization: Bearer)\n";

const CREATE_USAGE = `Usage: tarsy token create --project P --role R [--ttl 30d] [--name N]

Creates an API token (POST /api/v1/tokens) with the policy's role R in project P and prints it
once: it is stored only as a hash. The caller must administer project P.

Options:
      --project P   the token's one project
      --role R      a role the policy names (a g target or a p subject)
      --ttl D       lifetime: a number with m, h or d (default: until revoked)
      --name N      a name to tell tokens apart (default: <role>@<project>)
  -h, --help        show this help

${ENV_NOTE}`;

const CREATE_OPTIONS = {
  project: { type: "string" },
  role: { type: "string" },
  ttl: { type: "string" },
  name: { type: "string" },
  ...HELP_OPTION,
} as const;

export const tokenCreateCommand: Command = {
  path: ["token", "create"],
  summary: "create an API token and print it once",
  usage: CREATE_USAGE,
  options: CREATE_OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, CREATE_USAGE, CREATE_OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
    if (!values.project) throw new UsageError("--project is required");
    if (!values.role) throw new UsageError("--role is required");
    const created = await callApi(env, {
      method: "POST",
      path: "/api/v1/tokens",
      body: {
        name: values.name ?? `${values.role}@${values.project}`,
        project: values.project,
        role: values.role,
        ...(values.ttl && { ttl: values.ttl }),
      },
      schema: ApiTokenCreatedSchema,
    });
    io.out(`${created.token}\n`);
    io.err(
      `token ${created.id} (${created.name}: ${created.role} in ${created.project}, expires ${created.expires_at ?? "never"}); it is not shown again\n`,
    );
    return EXIT.ok;
  },
};

const LIST_USAGE = `Usage: tarsy token list [--output json]

Lists the API tokens of the projects you administer (GET /api/v1/tokens): metadata only.

Options:
  -o, --output FORMAT   text (one line per token) or json (the API's answer)
      --json            same as --output json
  -h, --help            show this help

${ENV_NOTE}`;

const row = (t: ApiTokenInfo): string =>
  [
    t.id,
    t.name,
    t.project,
    t.role,
    t.revoked_at ? "revoked" : "live",
    `expires ${t.expires_at ?? "never"}`,
    `last used ${t.last_used_at ?? "never"}`,
    `by ${t.created_by}`,
  ].join("  ");

const LIST_OPTIONS = { ...OUTPUT_OPTIONS, ...HELP_OPTION } as const;

export const tokenListCommand: Command = {
  path: ["token", "list"],
  summary: "list API tokens (never the tokens themselves)",
  usage: LIST_USAGE,
  options: LIST_OPTIONS,
  async run({ args, env, io }) {
    const { values } = parseArgs({ args, options: LIST_OPTIONS, strict: true });
    if (values.help) {
      io.out(LIST_USAGE);
      return EXIT.ok;
    }
    const format = outputFormat(values);
    const answer = await callApi(env, {
      method: "GET",
      path: "/api/v1/tokens",
      schema: ApiTokenListResponseSchema,
    });
    const { tokens } = answer;
    if (format === "json") io.out(jsonText(answer));
    else io.out(tokens.length === 0 ? "no tokens\n" : `${tokens.map(row).join("\n")}\n`);
    return EXIT.ok;
  },
};

const REVOKE_USAGE = `Usage: tarsy token revoke <id>

Revokes an API token (DELETE /api/v1/tokens/:id); it is refused from then on.

Options:
  -h, --help   show this help

${ENV_NOTE}`;

export const tokenRevokeCommand: Command = {
  path: ["token", "revoke"],
  summary: "revoke an API token",
  usage: REVOKE_USAGE,
  options: HELP_OPTION,
  async run({ args, env, io }) {
    const positionals = positionalArgs({ args, io }, REVOKE_USAGE, 1, "give exactly one token id");
    if (!positionals) return EXIT.ok;
    const id = positionals[0] as string;
    await callApi(env, {
      method: "DELETE",
      path: `/api/v1/tokens/${encodeURIComponent(id)}`,
      schema: z.null(),
    });
    io.out(`token ${id} revoked\n`);
    return EXIT.ok;
  },
};
