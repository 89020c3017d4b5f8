import { ANALYSIS_REQUIREMENTS } from "./general.ts";

export const INVESTIGATION_TASK = `## Your Task

Investigate this alert using the available tools. Call tools to gather evidence, reason about
what you find, and when you have enough information answer with your final analysis (without
calling any more tools).

${ANALYSIS_REQUIREMENTS}`;
