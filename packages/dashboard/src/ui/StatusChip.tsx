import Chip, { type ChipProps } from "@mui/material/Chip";

const COLORS: Record<string, ChipProps["color"]> = {
  completed: "success",
  failed: "error",
  timed_out: "error",
  cancelled: "warning",
  cancelling: "warning",
  in_progress: "info",
  active: "info",
  streaming: "info",
  pending: "default",
};

/** A session, stage, execution or event status as a coloured chip ("in progress", not "in_progress"). */
export function StatusChip(props: { status: string; size?: ChipProps["size"] }) {
  return (
    <Chip
      size={props.size ?? "small"}
      color={COLORS[props.status] ?? "default"}
      variant={props.status === "pending" ? "outlined" : "filled"}
      label={props.status.replace("_", " ")}
    />
  );
}
