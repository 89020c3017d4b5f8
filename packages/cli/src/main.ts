import { runCli } from "./cli.ts";
import { loadCliEnv } from "./env.ts";

const code = await runCli(process.argv.slice(2), loadCliEnv(), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
process.exitCode = code;
