import { BusNotFoundError, createBusAdmin } from "@tarsy/bus";
import {
  type DeadLetterListResponse,
  DeadLetterQuerySchema,
  type DeadLetterRedriveResponse,
} from "@tarsy/contracts";
import { Hono } from "hono";
import { z } from "zod";
import { noteAudit } from "../authz/audit.ts";
import type { IngestResources } from "../deps.ts";
import { notFound, unavailable, validationFailed } from "../errors.ts";
import { readQuery } from "../request.ts";

const SeqSchema = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/**
 * The dead letters (work messages that failed for good), for administrators of every project
 * (`authz/rules.ts`): the list, and re-driving one to its original subject. The same bus
 * operations `tarsy dlq list|redrive` runs against NATS directly; through the API they are
 * under the policy and a re-drive is audited.
 */
export function deadLetterRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const admin = createBusAdmin(deps.bus);

  app.get("/", async (c) => {
    const q = readQuery(c, DeadLetterQuerySchema);
    const page = await admin
      .listDeadLetters({ limit: q.limit, ...(q.after_seq ? { afterSeq: q.after_seq } : {}) })
      .catch((err: unknown) => {
        throw unavailable("the dead letters could not be read", err);
      });
    const body: DeadLetterListResponse = {
      dead_letters: page.items.map(({ seq, letter }) => ({
        seq,
        original_subject: letter.original_subject,
        stream: letter.stream,
        stream_seq: letter.stream_seq,
        deliveries: letter.deliveries,
        error: letter.error,
        data: letter.data,
        failed_at: letter.failed_at,
      })),
      more: page.more,
    };
    return c.json(body);
  });

  app.post("/:seq/redrive", async (c) => {
    const parsed = SeqSchema.safeParse(c.req.param("seq"));
    if (!parsed.success) throw validationFailed(parsed.error, "dead-letter sequence");
    const seq = parsed.data;
    const result = await admin.redriveDeadLetter(seq).catch((err: unknown) => {
      if (err instanceof BusNotFoundError) throw notFound("dead letter", String(seq));
      throw unavailable("the dead letter could not be redriven", err);
    });
    noteAudit(c, { reason: `dead letter ${seq} redriven to ${result.subject}` });
    const body: DeadLetterRedriveResponse = {
      seq,
      subject: result.subject,
      published_seq: result.seq,
      duplicate: result.duplicate,
    };
    return c.json(body);
  });

  return app;
}
