import { runCli } from "./cli.ts";
import { type CliEnv, loadCliEnv } from "./env.ts";

let env: CliEnv | undefined;
try {
  env = loadCliEnv();
} catch (error) {
  const issues = (error as { issues?: { path: PropertyKey[]; message: string }[] }).issues;
  const text = issues
    ? issues.map((i) => `  ${i.path.map(String).join(".")}: ${i.message}`).join("\n")
    : `  ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(`tarsy: invalid environment\n${text}\n`);
  process.exitCode = 2;
}
if (env) {
  const code = await runCli(process.argv.slice(2), env, {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
  process.exitCode = code;
}
