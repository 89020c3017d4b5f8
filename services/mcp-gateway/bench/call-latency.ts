/**
 * Tool-call latency through the gateway: runner → NATS → gateway → MCP server → masking → reply.
 * Run: `tsx services/mcp-gateway/bench/call-latency.ts` (needs NATS on 127.0.0.1:4222).
 */
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import {
  fixtureStdio,
  httpTransport,
  K8S_MASKING,
  serverConfig,
  startTestGateway,
} from "../test/helpers.ts";
import { type FixtureHttpServer, serveFixtureHttp } from "../test/servers/fixture-server.ts";

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const summary = (label: string, samples: number[], wallMs: number) => {
  const s = [...samples].sort((a, b) => a - b);
  console.log(
    `${label.padEnd(44)} n=${String(s.length).padStart(4)}  p50=${pct(s, 0.5).toFixed(2)}ms  p99=${pct(s, 0.99).toFixed(2)}ms  ${((s.length / wallMs) * 1000).toFixed(0)} calls/s`,
  );
};

const http: FixtureHttpServer = await serveFixtureHttp();
const gw = await startTestGateway(
  [
    serverConfig("fx", fixtureStdio(), K8S_MASKING),
    serverConfig("fxhttp", httpTransport("http", http.url), K8S_MASKING),
  ],
  // Spawning many stdio servers at once on a busy machine is slow; the calls are what is measured.
  { timeouts: { initMs: 120_000 } },
);
const client = createMcpGatewayClient(await gw.testBus.connectAnother());

async function run(
  label: string,
  server: string,
  tool: string,
  executions: number,
  callsEach: number,
) {
  const samples: number[] = [];
  // Warm up: open every execution's sessions first, one at a time.
  for (let e = 0; e < executions; e++) {
    const listed = await client.listTools({ execution_id: `${label}-${e}`, servers: [server] });
    if (Object.keys(listed.failed_servers).length > 0)
      throw new Error(JSON.stringify(listed.failed_servers));
  }
  const start = performance.now();
  await Promise.all(
    Array.from({ length: executions }, async (_, e) => {
      for (let i = 0; i < callsEach; i++) {
        const t0 = performance.now();
        const r = await client.callTool(
          { execution_id: `${label}-${e}`, servers: [server] },
          { name: `${server}.${tool}`, arguments: `n: ${i}` },
        );
        if (r.is_error) throw new Error(r.content);
        samples.push(performance.now() - t0);
      }
    }),
  );
  summary(label, samples, performance.now() - start);
  await Promise.all(Array.from({ length: executions }, (_, e) => client.release(`${label}-${e}`)));
}

await run("warm-up (JIT; ignore)", "fx", "echo_args", 1, 300);
await run("stdio echo, 1 execution sequential", "fx", "echo_args", 1, 300);
await run("stdio echo, 4 executions concurrent", "fx", "echo_args", 4, 100);
await run("stdio Secret YAML masked, 1 execution", "fx", "get_secret_yaml", 1, 200);
await run("stdio env dump masked, 1 execution", "fx", "env_dump", 1, 200);
await run("http echo, 1 execution sequential", "fxhttp", "echo_args", 1, 300);
await run("http echo, 4 executions concurrent", "fxhttp", "echo_args", 4, 100);
await gw.stop();
await http.close();
process.exit(0);
