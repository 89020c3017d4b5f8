import { Chip, Stack } from "@mui/material";
import type { MemoryResponse } from "@tarsy/contracts";

const VALENCE_COLOR = {
  positive: "success",
  negative: "error",
  neutral: "default",
} as const;

/** A memory's category and valence (and "deprecated"), as small outlined chips. */
export function MemoryChips(props: { memory: MemoryResponse; showDeprecated?: boolean }) {
  const { memory } = props;
  return (
    <Stack direction="row" spacing={0.5} useFlexGap sx={{ flexWrap: "wrap" }}>
      <Chip size="small" variant="outlined" label={memory.category} data-chip="category" />
      <Chip
        size="small"
        variant="outlined"
        color={VALENCE_COLOR[memory.valence]}
        label={memory.valence}
        data-chip="valence"
      />
      {props.showDeprecated && memory.deprecated ? (
        <Chip size="small" label="deprecated" data-chip="deprecated" />
      ) : null}
    </Stack>
  );
}
