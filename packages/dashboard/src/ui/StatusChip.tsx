import Chip, { type ChipProps } from "@mui/material/Chip";
import type { Theme } from "@mui/material/styles";

export type Tone = "success" | "error" | "warning" | "info" | "default";

const STATUS_TONES: Record<string, Tone> = {
  completed: "success",
  failed: "error",
  timed_out: "error",
  cancelled: "warning",
  cancelling: "warning",
  in_progress: "info",
  active: "info",
  streaming: "info",
};

/**
 * A small outlined chip in a tone. Its text takes the tone's darker shade on a light
 * background and its lighter one on a dark background: the palette's main shades of warning
 * and info are too light to read as text on white.
 */
export function ToneChip(props: {
  label: string;
  tone?: Tone;
  size?: ChipProps["size"];
  title?: string;
}) {
  const tone = props.tone ?? "default";
  return (
    <Chip
      size={props.size ?? "small"}
      variant="outlined"
      title={props.title}
      label={props.label}
      sx={
        tone === "default"
          ? undefined
          : (theme: Theme) => ({
              color:
                theme.palette.mode === "dark"
                  ? theme.palette[tone].light
                  : theme.palette[tone].dark,
              borderColor: theme.palette[tone].main,
              fontWeight: 500,
            })
      }
    />
  );
}

/** A session, stage, execution or event status ("in progress", not "in_progress"). */
export function StatusChip(props: { status: string; size?: ChipProps["size"] }) {
  return (
    <ToneChip
      size={props.size}
      tone={STATUS_TONES[props.status] ?? "default"}
      label={props.status.replace("_", " ")}
    />
  );
}
