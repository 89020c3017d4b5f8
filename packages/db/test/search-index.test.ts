import { describe, expect } from "vitest";
import { listSessions } from "../src/index.ts";
import { dbTest as test, withSql } from "./support.ts";

describe("free-text search", () => {
  test("case-insensitive substring search is served by the trigram indexes", async ({
    db,
    database,
  }) => {
    await withSql(database.url, async (sql) => {
      await sql`
        INSERT INTO alert_sessions (alert_data, alert_type, chain_id, final_analysis)
        SELECT 'pod web-' || i || ' restarted ' || md5(i::text), 'k8s', 'c',
               CASE WHEN i = 1234 THEN 'Root cause: NodeDiskPressure on worker-9' END
        FROM generate_series(1, 3000) AS i`;
      await sql`ANALYZE alert_sessions`;
    });
    const found = await listSessions(db.prisma, { search: "nodediskpressure" });
    expect(found.total).toBe(1);
    expect(found.items[0]?.finalAnalysis).toMatch(/NodeDiskPressure/);

    const plan = await withSql(database.url, (sql) =>
      sql.begin(async (tx) => {
        await tx`SET LOCAL enable_seqscan = off`;
        return tx.unsafe(
          `EXPLAIN SELECT id FROM alert_sessions
           WHERE alert_data ILIKE '%nodediskpressure%' OR final_analysis ILIKE '%nodediskpressure%'
              OR executive_summary ILIKE '%nodediskpressure%'`,
        );
      }),
    );
    const text = plan.map((row) => String(Object.values(row)[0])).join("\n");
    expect(text).toContain("alert_sessions_alert_data_trgm_idx");
    expect(text).toContain("alert_sessions_final_analysis_trgm_idx");
    expect(text).toContain("alert_sessions_executive_summary_trgm_idx");
  });
});
