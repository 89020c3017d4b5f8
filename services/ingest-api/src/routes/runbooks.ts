import type { RunbooksResponse } from "@tarsy/contracts";
import { Hono } from "hono";
import type { IngestResources } from "../deps.ts";

/** `GET /api/v1/runbooks`: the runbooks of `system.runbooks.repo_url`; fail-open (`[]`). */
export function runbookRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const log = deps.logger.child({ component: "runbooks" });

  app.get("/", async (c) => {
    let body: RunbooksResponse;
    try {
      body = await deps.runbooks.list(c.req.raw.signal);
    } catch (err) {
      log.warn({ err }, "runbook listing failed; answering with an empty list");
      body = [];
    }
    return c.json(body);
  });

  return app;
}
