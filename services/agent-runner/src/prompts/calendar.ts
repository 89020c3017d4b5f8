import { DEFAULT_HOLIDAYS, type Holiday } from "@tarsy/config";

/**
 * Tier 0 of the investigation and chat system prompts (as in the Go TARSy): when it is, in
 * UTC, and whether that is a weekday, a weekend or a holiday from `system.holidays` (the
 * built-in list when none are configured), with the staffing that usually goes with it.
 */

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

export type DayKind =
  | { kind: "WEEKDAY" }
  | { kind: "WEEKEND" }
  | { kind: "GLOBAL_HOLIDAY"; name: string };

const pad = (n: number) => String(n).padStart(2, "0");

/** A holiday on that UTC date wins over a weekend. */
export function dayKind(now: Date, holidays: readonly Holiday[]): DayKind {
  const list = holidays.length > 0 ? holidays : DEFAULT_HOLIDAYS;
  const monthDay = `${pad(now.getUTCMonth() + 1)}-${pad(now.getUTCDate())}`;
  const holiday = list.find((h) => h.date === monthDay);
  if (holiday) return { kind: "GLOBAL_HOLIDAY", name: holiday.name };
  const day = now.getUTCDay();
  return day === 0 || day === 6 ? { kind: "WEEKEND" } : { kind: "WEEKDAY" };
}

export function contextSection(now: Date, holidays: readonly Holiday[]): string {
  const weekday = WEEKDAYS[now.getUTCDay()] ?? "";
  const iso = now.toISOString().replace(/\.\d{3}Z$/, "Z");
  const date = iso.slice(0, 10);
  const day = dayKind(now, holidays);
  const label = day.kind === "GLOBAL_HOLIDAY" ? `GLOBAL_HOLIDAY (${day.name})` : day.kind;
  const staffing = day.kind === "WEEKDAY" ? "normal" : "reduced";
  return [
    "## Context",
    "",
    `Current time: ${iso} (${weekday})`,
    `Calendar context (UTC): ${date} — ${weekday} — ${label}`,
    `Staffing: ${staffing}`,
  ].join("\n");
}
