import { Chip, Stack } from "@mui/material";

/**
 * A session's labels (from its executive summary's LABELS line) as small chips. Nothing is
 * shown for an unlabelled session (null) or one the summary gave no label (`[]`).
 */
export function LabelChips(props: { labels: readonly string[] | null | undefined }) {
  const labels = props.labels ?? [];
  if (labels.length === 0) return null;
  return (
    <Stack
      direction="row"
      spacing={0.5}
      useFlexGap
      sx={{ flexWrap: "wrap" }}
      aria-label="Session labels"
      data-testid="session-labels"
    >
      {labels.map((label) => (
        <Chip key={label} label={label} size="small" variant="outlined" color="secondary" />
      ))}
    </Stack>
  );
}
