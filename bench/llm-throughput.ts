/**
 * llm-service throughput and added latency, measured against the loopback provider alone.
 *
 *   node --import tsx bench/llm-throughput.ts [--chunks 5000] [--paced 300] [--interval-ms 2]
 *
 * One process runs a loopback OpenAI-compatible SSE server, llm-service (real gRPC on
 * 127.0.0.1) and the client. For each provider wire format (OpenAI chat completions via the
 * langchain backend, Gemini streamGenerateContent via google-native):
 *  - burst: the fake writes N deltas as fast as it can; chunks/s read directly over HTTP vs
 *    through llm-service + llm-client;
 *  - paced: the fake writes one delta every interval, each carrying its send time; the
 *    per-chunk latency (receive − send) directly vs through the service; the difference is
 *    what llm-service adds per chunk.
 * Also the scripted backend alone (no provider) for the service's own ceiling.
 */
import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { createLogger } from "@tarsy/runtime";
import { createLlmServer } from "../llm-service/src/index.ts";
import { startFakeProvider } from "../llm-service/test/fakes/http.ts";
import {
  createLlmClient,
  type GenerateInput,
  type LlmChunk,
} from "../packages/llm-client/src/index.ts";

const { values } = parseArgs({
  options: {
    chunks: { type: "string", default: "5000" },
    paced: { type: "string", default: "300" },
    "interval-ms": { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
  },
});
const BURST = Number(values.chunks);
const PACED = Number(values.paced);
const INTERVAL = Number(values["interval-ms"]);
const ROUNDS = Number(values.rounds);
const WARMUP = 3000;
const now = () => performance.timeOrigin + performance.now();

type Wire = "openai" | "gemini";

function sseEvent(wire: Wire, text: string): string {
  const data =
    wire === "openai"
      ? {
          id: "c",
          object: "chat.completion.chunk",
          created: 1,
          model: "m",
          choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
        }
      : { candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }] };
  return `data: ${JSON.stringify(data)}\n\n`;
}

function sseEnd(wire: Wire): string {
  if (wire === "gemini") {
    return `data: ${JSON.stringify({
      candidates: [
        { content: { role: "model", parts: [{ text: "." }] }, finishReason: "STOP", index: 0 },
      ],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    })}\n\n`;
  }
  const usage = {
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
  return `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: ${JSON.stringify(usage)}\n\ndata: [DONE]\n\n`;
}

/** Writes `count` deltas; paced ones carry their send timestamp as the text. */
function responder(wire: Wire, count: number, paced: boolean) {
  return async (res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < count; i++) {
      const text = paced ? `${now().toFixed(3)};` : "tok ";
      if (!res.write(sseEvent(wire, text)) && !paced)
        await new Promise((r) => res.once("drain", r));
      if (paced) await sleep(INTERVAL);
    }
    res.end(sseEnd(wire));
  };
}

/** Reads the fake directly: fetch + SSE line parsing (what any SDK must do at least). */
async function direct(url: string, onText: (text: string) => void): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "application/json" },
  });
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(part, { stream: true });
    let at = buffer.indexOf("\n\n");
    while (at >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      at = buffer.indexOf("\n\n");
      const data = line.slice("data: ".length);
      if (data === "[DONE]") continue;
      const parsed = JSON.parse(data) as {
        choices?: { delta: { content?: string } }[];
        candidates?: { content: { parts: { text?: string }[] } }[];
      };
      const text =
        parsed.choices?.[0]?.delta.content ?? parsed.candidates?.[0]?.content.parts[0]?.text;
      if (text) onText(text);
    }
  }
}

function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function latencies(texts: string[], received: number[]): number[] {
  return texts
    .map((t, i) => {
      const sent = Number.parseFloat(t);
      return Number.isFinite(sent) ? (received[i] ?? 0) - sent : Number.NaN;
    })
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const fake = await startFakeProvider();
  const logger = createLogger({ service: "llm-service", level: "warn" });
  const server = createLlmServer({
    logger,
    getSecret: (n) => (n === "BENCH_KEY" ? "bench-key" : undefined),
  });
  const port = await server.listen("127.0.0.1", 0);
  const client = createLlmClient({ address: `127.0.0.1:${port}` });

  const inputFor = (wire: Wire): GenerateInput => ({
    sessionId: "bench",
    executionId: "bench",
    messages: [{ role: "user", content: "go" }],
    config:
      wire === "openai"
        ? { provider: "openai", model: "m", apiKeyEnv: "BENCH_KEY", baseUrl: `${fake.url}/v1` }
        : {
            provider: "google",
            backend: "google-native",
            model: "gemini-2.5-flash",
            apiKeyEnv: "BENCH_KEY",
            baseUrl: fake.url,
          },
  });
  const directUrl = (wire: Wire) =>
    wire === "openai"
      ? `${fake.url}/v1/chat/completions`
      : `${fake.url}/v1beta/models/m:streamGenerateContent?alt=sse`;

  const viaService = async (input: GenerateInput, onText: (text: string) => void) => {
    for await (const chunk of client.generate(input) as AsyncIterable<LlmChunk>) {
      if (chunk.type === "text") onText(chunk.content);
      if (chunk.type === "error") throw new Error(chunk.message);
    }
  };

  console.log(
    `llm-service benchmark — burst ${BURST} deltas, paced ${PACED} deltas every ${INTERVAL} ms (one process, 127.0.0.1)`,
  );
  for (const wire of ["openai", "gemini"] as Wire[]) {
    // warm-up both paths (JIT): the first thousands of chunks run several times slower
    fake.enqueue(responder(wire, WARMUP, false));
    await direct(directUrl(wire), () => {});
    fake.enqueue(responder(wire, WARMUP, false));
    await viaService(inputFor(wire), () => {});

    const rows: Record<string, string | number>[] = [];
    for (const [path, run] of [
      ["direct HTTP", (on: (t: string) => void) => direct(directUrl(wire), on)],
      ["via llm-service", (on: (t: string) => void) => viaService(inputFor(wire), on)],
    ] as const) {
      const rates: number[] = [];
      let n = 0;
      for (let round = 0; round < ROUNDS; round++) {
        fake.enqueue(responder(wire, BURST, false));
        n = 0;
        const t0 = performance.now();
        await run(() => n++);
        rates.push(n / ((performance.now() - t0) / 1000));
      }

      fake.enqueue(responder(wire, PACED, true));
      const texts: string[] = [];
      const received: number[] = [];
      await run((t) => {
        received.push(now());
        texts.push(t);
      });
      const lat = latencies(texts, received);
      rows.push({
        path,
        "burst chunks": n,
        "chunks/s (median)": Math.round(median(rates)),
        "paced p50 ms": percentile(lat, 50).toFixed(3),
        "paced p99 ms": percentile(lat, 99).toFixed(3),
      });
    }
    const [d, s] = rows;
    console.log(
      `\n${wire === "openai" ? "OpenAI chat completions (langchain backend)" : "Gemini streamGenerateContent (google-native backend)"}`,
    );
    console.table(rows);
    if (d && s) {
      const added50 = Number(s["paced p50 ms"]) - Number(d["paced p50 ms"]);
      const added99 = Number(s["paced p99 ms"]) - Number(d["paced p99 ms"]);
      console.log(
        `added latency per chunk: p50 ${added50.toFixed(3)} ms, p99 ${added99.toFixed(3)} ms`,
      );
    }
  }

  // The service's own ceiling: scripted backend, one character per chunk.
  const script = JSON.stringify([{ text: "x".repeat(BURST), chunk_size: 1 }]);
  const rates: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    let n = 0;
    const t0 = performance.now();
    for await (const chunk of client.generate({
      sessionId: `bench-scripted-${round}`,
      messages: [{ role: "user", content: "go" }],
      config: { provider: "scripted", backend: "scripted", script },
    })) {
      if (chunk.type === "text") n++;
    }
    if (round > 0) rates.push(n / ((performance.now() - t0) / 1000)); // round 0 warms up
  }
  console.log(
    `\nscripted backend (no provider): ${BURST} chunks, median ${Math.round(median(rates))} chunks/s`,
  );

  client.close();
  await server.shutdown(1000);
  await fake.close();
}

await main();
