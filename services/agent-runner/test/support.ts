/** The agent-runner tests' environment (env.ts) and its vitest fixtures. */
import { test } from "vitest";
import { createEnv, type EnvOptions, type Stop, startLlm } from "./env.ts";
import { StandInGateway } from "./stand-in-gateway.ts";

export * from "./env.ts";

/**
 * `test` with, each the test's own:
 * - `env`: a database, a bus and a config (made with `envOptions`, none by default; a file
 *   sets them with `runnerTest.override("envOptions", ...)`), dropped after the test;
 * - `stops`: what the test started, stopped after it in reverse order, before `env` goes;
 * - `llm(script)`: starts llm-service with a scripted backend, stopped with `stops`;
 * - `echo`: a stand-in gateway whose one tool `echo` answers `Echo: <message>`.
 */
export const runnerTest = test
  .extend("envOptions", {} as EnvOptions)
  .extend("env", async ({ envOptions }, { onCleanup }) => {
    const env = await createEnv(envOptions);
    onCleanup(() => env.cleanup());
    return env;
  })
  // Depends on `env` so that its stops run before the env is dropped.
  .extend("stops", async ({ env: _env }, { onCleanup }) => {
    const stops: Stop[] = [];
    onCleanup(async () => {
      for (const stop of stops.reverse()) await stop();
    });
    return stops;
  })
  .extend("llm", async ({ stops }) => async (script: unknown) => {
    const started = await startLlm(script);
    stops.push(started.stop);
    return started;
  })
  .extend("echo", async () => new StandInGateway({ echo: (a) => `Echo: ${String(a.message)}` }));
