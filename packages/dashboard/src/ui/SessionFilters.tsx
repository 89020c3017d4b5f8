import {
  Button,
  Checkbox,
  FormControl,
  FormControlLabel,
  FormGroup,
  FormLabel,
  Paper,
  Stack,
  TextField,
  ToggleButton,
  ToggleButtonGroup,
} from "@mui/material";
import {
  type ReviewStatus,
  ReviewStatusSchema,
  type SessionStatus,
  SessionStatusSchema,
} from "@tarsy/contracts";
import { useEffect, useState } from "react";
import { REVIEW_STATUS_LABELS } from "../lib/review.ts";
import { type ListState, TIME_RANGE_PRESETS, type TimeRangePreset } from "../lib/url-state.ts";
import { NATIVE_SELECT } from "./fields.ts";

type RangeChoice = TimeRangePreset | "all" | "custom";
const RANGE_LABELS: Record<RangeChoice, string> = {
  all: "All time",
  "1h": "1h",
  "24h": "24h",
  "7d": "7d",
  "30d": "30d",
  custom: "Custom",
};
const PRESETS = Object.keys(TIME_RANGE_PRESETS) as TimeRangePreset[];

/** The list's filters; every change goes to the URL through `update`. */
export function SessionFilters(props: {
  state: ListState;
  options: { alert_types: string[]; chain_ids: string[]; labels: string[] } | null;
  /** The projects the caller may see (from `/auth/me`). */
  projects: string[];
  update: (patch: Partial<ListState>) => void;
  clear: (() => void) | null;
}) {
  const { state, update } = props;
  const [searchText, setSearchText] = useState(state.search);
  const [custom, setCustom] = useState(Boolean(state.from || state.to));
  // Search as you type, after a pause; fewer than 3 characters searches nothing.
  useEffect(() => {
    if (searchText === state.search) return;
    const t = setTimeout(() => update({ search: searchText }), 300);
    return () => clearTimeout(t);
  });
  const range: RangeChoice = state.range || (custom || state.from || state.to ? "custom" : "all");
  const pickRange = (choice: RangeChoice | null) => {
    if (!choice) return;
    setCustom(choice === "custom");
    if (choice === "custom") update({ range: "" });
    else update({ range: choice === "all" ? "" : choice, from: "", to: "" });
  };
  const toggleStatus = (s: SessionStatus) =>
    update({
      status: state.status.includes(s) ? state.status.filter((x) => x !== s) : [...state.status, s],
    });
  const toggleReview = (s: ReviewStatus) =>
    update({
      review_status: state.review_status.includes(s)
        ? state.review_status.filter((x) => x !== s)
        : [...state.review_status, s],
    });
  return (
    <Paper
      component="form"
      variant="outlined"
      aria-label="Filter sessions"
      onSubmit={(e) => e.preventDefault()}
      sx={{ p: 2, mb: 2 }}
    >
      <Stack direction="row" spacing={2} useFlexGap sx={{ flexWrap: "wrap", alignItems: "center" }}>
        <TextField
          id="filter-search"
          type="search"
          label="Search"
          size="small"
          value={searchText}
          placeholder="alert data, analysis… (3+ chars)"
          onChange={(e) => setSearchText(e.target.value)}
          sx={{ minWidth: 280 }}
        />
        {(
          [
            { key: "alert_type", label: "Alert type", values: props.options?.alert_types },
            { key: "chain_id", label: "Chain", values: props.options?.chain_ids },
            { key: "project", label: "Project", values: props.projects },
            { key: "label", label: "Label", values: props.options?.labels },
          ] as const
        ).map((f) => (
          <TextField
            key={f.key}
            id={`filter-${f.key}`}
            select
            size="small"
            label={f.label}
            value={state[f.key]}
            onChange={(e) => update({ [f.key]: e.target.value })}
            slotProps={NATIVE_SELECT}
            sx={{ minWidth: 160 }}
          >
            <option value="">All</option>
            {f.values?.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </TextField>
        ))}
        <ToggleButtonGroup
          size="small"
          exclusive
          value={range}
          onChange={(_, v: RangeChoice | null) => pickRange(v)}
          aria-label="Time range"
          sx={{ "& .MuiToggleButton-root": { textTransform: "none", px: 1.5 } }}
        >
          {(["all", ...PRESETS, "custom"] as const).map((r) => (
            <ToggleButton
              key={r}
              value={r}
              aria-label={r === "all" || r === "custom" ? RANGE_LABELS[r] : `Last ${r}`}
            >
              {RANGE_LABELS[r]}
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
        {range === "custom"
          ? (["from", "to"] as const).map((key) => (
              <TextField
                key={key}
                id={`filter-${key}`}
                type="datetime-local"
                size="small"
                label={key === "from" ? "From" : "To"}
                value={state[key]}
                onChange={(e) => update({ [key]: e.target.value })}
                slotProps={{ inputLabel: { shrink: true } }}
              />
            ))
          : null}
        {props.clear ? (
          <Button
            onClick={() => {
              setSearchText("");
              setCustom(false);
              props.clear?.();
            }}
          >
            Clear filters
          </Button>
        ) : null}
      </Stack>
      <FormControl component="fieldset" sx={{ mt: 1 }}>
        <FormLabel component="legend">Status</FormLabel>
        <FormGroup row>
          {SessionStatusSchema.options.map((s) => (
            <FormControlLabel
              key={s}
              control={
                <Checkbox
                  size="small"
                  checked={state.status.includes(s)}
                  onChange={() => toggleStatus(s)}
                />
              }
              label={s.replace("_", " ")}
            />
          ))}
        </FormGroup>
      </FormControl>
      <FormControl component="fieldset" sx={{ mt: 1, ml: { md: 3 } }}>
        <FormLabel component="legend">Review</FormLabel>
        <FormGroup row>
          {ReviewStatusSchema.options.map((s) => (
            <FormControlLabel
              key={s}
              control={
                <Checkbox
                  size="small"
                  checked={state.review_status.includes(s)}
                  onChange={() => toggleReview(s)}
                />
              }
              label={REVIEW_STATUS_LABELS[s]}
            />
          ))}
        </FormGroup>
      </FormControl>
    </Paper>
  );
}
