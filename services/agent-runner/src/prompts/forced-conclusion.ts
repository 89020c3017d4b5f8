/** Sent (with no tools bound) when an agent used up its iterations without concluding. */
export function forcedConclusionPrompt(iterations: number): string {
  return `You have reached the limit of ${iterations} iterations for this investigation, so you
cannot call any more tools. Based on everything you gathered so far, give your final analysis
now. Say clearly which conclusions are well supported, which are tentative, and what you could
not verify because the investigation had to stop.`;
}
