/**
 * Tokens and time saved by resuming an interrupted execution instead of starting it over
 * (see resume/run.ts).
 *
 *   pnpm --filter @tarsy/bench resume [--iterations 10] [--kill-at 7]
 */
import { parseArgs } from "node:util";
import { formatResumeRows, type ResumeRow, runResumeBench } from "./resume/run.ts";

const { values } = parseArgs({
  options: {
    iterations: { type: "string", default: "10" },
    "kill-at": { type: "string", default: "7" },
  },
});
const iterations = Number(values.iterations);
const killAt = Number(values["kill-at"]);
const rows = await runResumeBench({ iterations, killAt });
console.log(
  `A ${iterations}-iteration execution (${iterations - 1} tool calls, then the answer), interrupted during LLM call ${killAt}:\n`,
);
console.log(formatResumeRows(rows));
const [base, resumed, restarted] = rows;
if (base && resumed && restarted) {
  const extra = (r: ResumeRow) => r.tokens - base.tokens;
  console.log(
    `\nOver the uninterrupted baseline: resuming bills ${extra(resumed).toLocaleString("en-US")} more tokens, starting over ${extra(restarted).toLocaleString("en-US")}; the finishing attempt takes ${Math.round(resumed.finishMs)} ms resumed against ${Math.round(restarted.finishMs)} ms started over.`,
  );
}
process.exit(0);
