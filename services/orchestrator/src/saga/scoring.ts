import type { ScoreRequested } from "@tarsy/contracts";
import type { SagaDeps } from "./deps.ts";

/** Opens the judge's stage for a score someone asked for (built next). */
export async function startRequestedScore(_deps: SagaDeps, message: ScoreRequested): Promise<void> {
  throw new Error(`scoring is not built yet (score ${message.score_id})`);
}
