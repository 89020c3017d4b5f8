import type { ForcedConclusionReason } from "@tarsy/contracts";

/**
 * Sent (with no tools bound) when an agent must conclude: it used up its iterations, or its
 * time budget is down to the reserve its conclusion needs.
 */
export function forcedConclusionPrompt(reason: ForcedConclusionReason, iterations: number): string {
  const why =
    reason === "time_budget"
      ? "You are almost out of time for this investigation"
      : `You have reached the limit of ${iterations} iterations for this investigation`;
  return `${why}, so you
cannot call any more tools. Based on everything you gathered so far, give your final analysis
now. Say clearly which conclusions are well supported, which are tentative, and what you could
not verify because the investigation had to stop.`;
}
