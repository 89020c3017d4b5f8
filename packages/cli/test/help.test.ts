import { describe, expect, it } from "vitest";
import { type CliIo, COMMANDS, type Command, helpText, loadCliEnv, runCli } from "../src/index.ts";

/** The options of `command` that its help text does not mention (long and short forms). */
function undocumented(command: Command, help: string): string[] {
  const missing: string[] = [];
  const mentions = (flag: string) =>
    new RegExp(`(?<![\\w-])${flag.replace(/[-]/g, "\\-")}(?![\\w-])`).test(help);
  for (const [name, option] of Object.entries(command.options)) {
    if (!mentions(`--${name}`)) missing.push(`--${name}`);
    if (option.short && !mentions(`-${option.short}`)) missing.push(`-${option.short}`);
  }
  return missing;
}

async function help(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  };
  const code = await runCli(argv, loadCliEnv({}), io);
  return { code, out, err };
}

describe("help", () => {
  it("tarsy --help lists every command, the exit codes and the authentication variables", async () => {
    const { code, out } = await help(["--help"]);
    expect(code).toBe(0);
    expect(out).toBe(helpText());
    for (const command of COMMANDS) {
      expect(out).toContain(`tarsy ${command.path.join(" ")} `);
    }
    expect(out).toContain("TARSY_TOKEN");
    expect(out).toContain("TARSY_COOKIE_FILE");
    expect(out).toMatch(/Exit codes: 0 .*; 1 .*; 2 /);
  });

  it.each(COMMANDS.map((c) => [c.path.join(" "), c] as const))(
    "tarsy %s --help prints its usage naming every option it parses",
    async (_name, command) => {
      const { code, out, err } = await help([...command.path, "--help"]);
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(out).toBe(command.usage);
      expect(out).toMatch(new RegExp(`^Usage: tarsy ${command.path.join(" ")}`));
      expect(Object.keys(command.options)).toContain("help");
      expect(undocumented(command, out)).toEqual([]);
    },
  );

  it("an option missing from the help is caught", () => {
    const command: Command = {
      path: ["x"],
      summary: "x",
      usage: "Usage: tarsy x\n  -h, --help  help\n  --page-size N\n",
      options: {
        help: { type: "boolean", short: "h" },
        page: { type: "string", short: "p" },
        "page-size": { type: "string" },
      },
      run: () => 0,
    };
    expect(undocumented(command, command.usage)).toEqual(["--page", "-p"]);
  });
});
