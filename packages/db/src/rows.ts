/**
 * Raw-SQL rows → model objects. Every column is the snake_case `@map` of its camelCase field
 * (a test checks this against Prisma's own reads), so a row converts key by key.
 */
const camel = (key: string): string =>
  key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export function toModel<T>(row: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) out[camel(key)] = value;
  return out as T;
}
