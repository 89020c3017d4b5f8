/** Row ids are Postgres `uuid`s; a string of another shape names no row (and a query would fail). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isRowId(value: string): boolean {
  return UUID.test(value);
}
