// Prisma 7 CLI configuration (`prisma generate`; `prisma migrate deploy` where the schema
// engine can be downloaded). Prisma requires a default export here.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "../../prisma/schema.prisma",
  migrations: { path: "../../prisma/migrations" },
  datasource: {
    // Only `migrate deploy`/`studio` connect; `generate` works without a database.
    url: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  },
});
