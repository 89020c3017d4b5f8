import { Chip, type ChipProps } from "@mui/material";

const COLOR: Record<string, ChipProps["color"]> = {
  completed: "success",
  failed: "error",
  timed_out: "error",
  in_progress: "info",
  active: "info",
  cancelling: "warning",
  pending: "default",
  cancelled: "default",
};

/** A session's (or stage's) status as a chip; the classes are kept for the pages' styles. */
export function StatusBadge(props: { status: string }) {
  return (
    <Chip
      size="small"
      variant="outlined"
      color={COLOR[props.status] ?? "default"}
      className={`badge status-${props.status}`}
      label={props.status.replace("_", " ")}
      component="span"
    />
  );
}
