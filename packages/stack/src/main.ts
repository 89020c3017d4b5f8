/**
 * `pnpm start`: the whole TARSy system on this machine.
 *
 *   pnpm start               demo mode when no provider key is set, else real investigations
 *   pnpm start --demo        force the demo (scripted LLM + bundled demo cluster)
 *   pnpm start --once        demo: exit after the demo investigation finished (smoke test)
 *   pnpm start --runners 3   agent-runner processes (default 2)
 *   pnpm start --config-dir DIR [--llm-script FILE]
 *                            your configuration; with --llm-script every LLM call is answered
 *                            from FILE whatever the provider (a config tried offline, no key)
 *
 * Postgres: DATABASE_URL, else an embedded server. NATS: NATS_URL, else 127.0.0.1:4222, else a
 * nats-server started here. Ctrl-C, SIGTERM or SIGHUP (to this process or to pnpm) stops
 * everything; should this process die without stopping (SIGKILL), its guardian does.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ACTIVE_SESSION_STATUSES, type SessionStatus } from "@tarsy/contracts";
import { loadStartEnv, PROVIDER_KEYS } from "./env.ts";
import { watchLauncher } from "./launcher.ts";
import { type Stack, startStack } from "./stack.ts";

const root = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const { values } = parseArgs({
  options: {
    demo: { type: "boolean", default: false },
    once: { type: "boolean", default: false },
    runners: { type: "string", default: "2" },
    "log-level": { type: "string", default: "info" },
    "config-dir": { type: "string" },
    "llm-script": { type: "string" },
  },
});
const env = loadStartEnv();
const hasKey = PROVIDER_KEYS.some((k) => env[k]);
const configDirArg = values["config-dir"];
const scriptArg = values["llm-script"];
if ((values.demo || values.once) && (configDirArg || scriptArg)) {
  process.stderr.write(
    "pnpm start: --demo and --once run the demo; drop --config-dir/--llm-script\n",
  );
  process.exit(2);
}
// Demo mode: asked for, or nothing else to go on (no key, no configuration, no script).
const demo = values.demo || values.once || (!hasKey && !configDirArg && !scriptArg);
const configDir = demo
  ? resolve(root, "deploy/demo")
  : resolve(process.cwd(), configDirArg ?? resolve(root, env.TARSY_CONFIG_DIR));
const llmScriptPath = demo
  ? resolve(root, "deploy/demo/llm-script.yaml")
  : scriptArg
    ? resolve(process.cwd(), scriptArg)
    : undefined;
const say = (line: string) => process.stdout.write(`\x1b[1mtarsy\x1b[0m            | ${line}\n`);

// Signals are handled from the first moment. One arriving while the stack starts ends this
// process at once: the stack's guardian then stops what was started, services first.
let stack: Stack | undefined;
let stopping = false;
const shutdown = async (code: number) => {
  if (stopping) return;
  stopping = true;
  say("stopping…");
  await stack?.stop();
  process.exit(code);
};
// A closed terminal or a gone pnpm must not crash the shutdown with EPIPE/EIO.
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => void shutdown(0));
}
// `pnpm start` runs this through a shell: a signal to pnpm ends pnpm and the shell only.
watchLauncher((pid) => {
  say(`launcher process ${pid} is gone`);
  void shutdown(0);
});
say(`stack process ${process.pid}`);

if (!demo && scriptArg) {
  say(`SCRIPTED LLM: every LLM call is answered from ${llmScriptPath}; no model is called.`);
} else if (!demo && !hasKey) {
  say(`No provider key is set (${PROVIDER_KEYS.join(", ")}): LLM calls will fail.`);
}
if (!demo) say(`configuration: ${configDir}`);
if (demo) {
  say("DEMO MODE: scripted LLM answers and a bundled demo cluster (no provider key is set).");
  say(
    `For real investigations set one of ${PROVIDER_KEYS.join(", ")} and a config in deploy/config.`,
  );
}
stack = await startStack({
  root,
  configDir,
  ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
  ...(env.NATS_URL ? { natsUrl: env.NATS_URL } : {}),
  ...(llmScriptPath ? { llmScriptPath } : {}),
  replicas: { "agent-runner": Number(values.runners) },
  logLevel: values["log-level"],
  env: {
    TARSY_REPO_ROOT: root,
    ...(!demo && scriptArg ? { LLM_SCRIPT_ALL_PROVIDERS: "true" } : {}),
  },
});

say(`API and dashboard: ${stack.apiUrl}   WebSocket: ${stack.wsUrl}`);
if (demo) {
  const response = await fetch(`${stack.apiUrl}/api/v1/alerts`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-user": "demo" },
    body: JSON.stringify({
      alert_type: "PodCrashLooping",
      data: {
        alertname: "PodCrashLooping",
        namespace: "payments",
        pod: "payments-api-7f9c6d5b8-x2kqz",
        severity: "critical",
        description: "Pod payments-api-7f9c6d5b8-x2kqz restarted 14 times in 50 minutes",
      },
    }),
  });
  const body = (await response.json()) as { session_id?: string };
  if (!response.ok || !body.session_id) {
    say(`demo alert was refused: ${response.status} ${JSON.stringify(body)}`);
    await shutdown(1);
  }
  const id = body.session_id as string;
  say(`demo alert submitted: session ${id}`);
  say(
    `watch it live:  TARSY_API_URL=${stack.apiUrl} TARSY_WS_URL=${stack.wsUrl} pnpm tarsy session watch ${id}`,
  );
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const detail = (await (await fetch(`${stack.apiUrl}/api/v1/sessions/${id}`)).json()) as {
      status?: SessionStatus;
      final_analysis?: string | null;
      executive_summary?: string | null;
    };
    if (detail.status && !ACTIVE_SESSION_STATUSES.includes(detail.status)) {
      say(`demo investigation ${detail.status}.`);
      if (detail.executive_summary) say(`executive summary: ${detail.executive_summary}`);
      if (detail.final_analysis) process.stdout.write(`\n${detail.final_analysis}\n\n`);
      if (values.once) await shutdown(detail.status === "completed" ? 0 : 1);
      break;
    }
  }
}
say("running; Ctrl-C to stop.");
