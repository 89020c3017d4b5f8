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
 * A small outlined chip in a tone. Its text takes the tone's darker shade in the light scheme
 * and its lighter one in the dark scheme, for contrast on either background.
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
          : (theme: Theme) => {
              // CSS variables: each reference follows the color scheme <html> is in.
              const palette = (theme.vars ?? theme).palette[tone];
              return {
                color: palette.dark,
                borderColor: palette.main,
                fontWeight: 500,
                ...theme.applyStyles("dark", { color: palette.light }),
              };
            }
      }
    />
  );
}

/** A session, stage, execution or event status ("in progress", not "in_progress"). */
export function StatusChip(props: { status: string; size?: ChipProps["size"]; title?: string }) {
  return (
    <ToneChip
      size={props.size}
      title={props.title}
      tone={STATUS_TONES[props.status] ?? "default"}
      label={props.status.replace("_", " ")}
    />
  );
}
