/**
 * Dashboard benchmark: the session page with a large session (default 5,000 timeline events,
 * tool results of 100 KB) beside a 50-event one measured in the same run, and the session list
 * over 1,000 stored sessions, in Chromium: time to interactive, frame times while scrolling and
 * while an investigation streams in live, JS heap and DOM size.
 *
 *   pnpm --filter @tarsy/bench dashboard [--events 5000] [--baseline 50] [--list 1000]
 *     [--seconds 10] [--opens 3] [--scroll-speed 6000] [--json]
 *
 * Needs Postgres (DATABASE_URL or 127.0.0.1:5432), NATS with JetStream (NATS_URL or
 * 127.0.0.1:4222) and Chromium (CHROMIUM_PATH or /usr/bin/chromium).
 */
import { parseArgs } from "node:util";
import { formatReport } from "./dashboard/report.ts";
import { DEFAULT_OPTIONS, runDashboardBenchmark } from "./dashboard/run.ts";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: String(DEFAULT_OPTIONS.events) },
    baseline: { type: "string", default: String(DEFAULT_OPTIONS.baseline) },
    list: { type: "string", default: String(DEFAULT_OPTIONS.list) },
    seconds: { type: "string", default: String(DEFAULT_OPTIONS.seconds) },
    opens: { type: "string", default: String(DEFAULT_OPTIONS.opens) },
    "scroll-speed": { type: "string", default: String(DEFAULT_OPTIONS.scrollPxPerSecond) },
    json: { type: "boolean", default: false },
  },
});

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} takes a whole number of at least 1, not "${text}"`);
    process.exit(2);
  }
  return n;
}

const controller = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (controller.signal.aborted) {
      console.error(`${signal} again: exiting without cleaning up`);
      process.exit(130);
    }
    console.error(`${signal}: stopping and cleaning up`);
    controller.abort();
  });
}

try {
  const result = await runDashboardBenchmark({
    events: positive("events", values.events),
    baseline: positive("baseline", values.baseline),
    list: positive("list", values.list),
    seconds: positive("seconds", values.seconds),
    opens: positive("opens", values.opens),
    scrollPxPerSecond: positive("scroll-speed", values["scroll-speed"]),
    log: (line) => console.error(`· ${line}`),
    signal: controller.signal,
  });
  console.log(values.json ? JSON.stringify(result, null, 2) : formatReport(result));
  process.exit(controller.signal.aborted ? 1 : 0);
} catch (err) {
  console.error(controller.signal.aborted ? (err as Error).message : err);
  process.exit(1);
}
