import {
  Alert,
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  LinearProgress,
  Link as MuiLink,
  Pagination,
  Paper,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from "@mui/material";
import {
  MemoryCategorySchema,
  type MemoryListResponse,
  type MemoryResponse,
  MemoryValenceSchema,
} from "@tarsy/contracts";
import { useState } from "react";
import { Link as RouterLink } from "react-router";
import { type AccessState, can } from "../lib/access.ts";
import {
  formatMemoryState,
  type MemoryState,
  type MemoryStateFilter,
  parseMemoryState,
} from "../lib/memory-state.ts";
import { useAccess, useLoad, useServices } from "./context.tsx";
import { NATIVE_SELECT } from "./fields.ts";
import { formatTime } from "./format.ts";
import { MemoryChips } from "./MemoryChips.tsx";
import { navigate } from "./router.tsx";

const STATES: { value: MemoryStateFilter; label: string }[] = [
  { value: "all", label: "All" },
  { value: "live", label: "Live" },
  { value: "deprecated", label: "Deprecated" },
];

function Filters(props: { state: MemoryState; update: (patch: Partial<MemoryState>) => void }) {
  const { state, update } = props;
  const fields = [
    {
      key: "category",
      label: "Category",
      options: [{ value: "", label: "Any" }, ...MemoryCategorySchema.options.map(asOption)],
    },
    {
      key: "valence",
      label: "Valence",
      options: [{ value: "", label: "Any" }, ...MemoryValenceSchema.options.map(asOption)],
    },
    { key: "state", label: "State", options: STATES },
  ] as const;
  return (
    <Paper
      component="form"
      variant="outlined"
      aria-label="Filter memories"
      onSubmit={(e) => e.preventDefault()}
      sx={{ p: 2, mb: 2 }}
    >
      <Stack direction="row" spacing={2} useFlexGap sx={{ flexWrap: "wrap" }}>
        {fields.map((f) => (
          <TextField
            key={f.key}
            id={`memories-${f.key}`}
            select
            size="small"
            label={f.label}
            value={state[f.key]}
            // A new filter starts at the first page.
            onChange={(e) => update({ [f.key]: e.target.value, page: 1 })}
            slotProps={NATIVE_SELECT}
            sx={{ minWidth: 160 }}
          >
            {f.options.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </TextField>
        ))}
      </Stack>
    </Paper>
  );
}

const asOption = (value: string) => ({ value, label: value });

/** Deprecate / make live and Delete (with a confirmation), each only where the caller may. */
function RowActions(props: {
  memory: MemoryResponse;
  access: AccessState;
  onChanged: () => void;
  onError: (message: string) => void;
}) {
  const { api } = useServices();
  const { memory, access } = props;
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const mayUpdate = can(access, "update", memory.project);
  const mayDelete = can(access, "delete", memory.project);
  if (!mayUpdate && !mayDelete) return null;
  const run = (work: Promise<unknown>) => {
    setBusy(true);
    work.then(
      () => {
        setBusy(false);
        setConfirming(false);
        props.onChanged();
      },
      (err: Error) => {
        setBusy(false);
        setConfirming(false);
        props.onError(err.message);
      },
    );
  };
  const titleId = `delete-memory-${memory.id}`;
  return (
    <Stack direction="row" spacing={1} sx={{ justifyContent: "flex-end" }}>
      {mayUpdate ? (
        <Button
          size="small"
          variant="outlined"
          disabled={busy}
          onClick={() => run(api.updateMemory(memory.id, { deprecated: !memory.deprecated }))}
        >
          {memory.deprecated ? "Undeprecate" : "Deprecate"}
        </Button>
      ) : null}
      {mayDelete ? (
        <Button
          size="small"
          variant="outlined"
          color="error"
          disabled={busy}
          onClick={() => setConfirming(true)}
        >
          Delete
        </Button>
      ) : null}
      <Dialog
        open={confirming}
        onClose={() => !busy && setConfirming(false)}
        aria-labelledby={titleId}
      >
        <DialogTitle id={titleId}>Delete this memory?</DialogTitle>
        <DialogContent>
          <DialogContentText>
            “{memory.content}” is deleted for good: later investigations no longer get it. To only
            keep it from them, deprecate it instead.
          </DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setConfirming(false)} disabled={busy}>
            Keep it
          </Button>
          <Button
            color="error"
            variant="contained"
            disabled={busy}
            onClick={() => run(api.deleteMemory(memory.id))}
          >
            Delete
          </Button>
        </DialogActions>
      </Dialog>
    </Stack>
  );
}

function MemoryTable(props: {
  body: MemoryListResponse;
  access: AccessState;
  onChanged: () => void;
  onError: (message: string) => void;
}) {
  return (
    <TableContainer component={Paper} variant="outlined">
      <Table size="small" aria-label="Memories">
        <TableHead>
          <TableRow>
            <TableCell sx={{ width: "38%" }}>Content</TableCell>
            <TableCell sx={{ minWidth: 230 }}>Kind</TableCell>
            <TableCell align="right">Confidence</TableCell>
            <TableCell align="right">Seen</TableCell>
            <TableCell>Source session</TableCell>
            <TableCell>Updated</TableCell>
            <TableCell align="right">Actions</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {props.body.memories.map((m) => (
            <TableRow
              key={m.id}
              data-memory-id={m.id}
              data-deprecated={m.deprecated}
              sx={m.deprecated ? { "& td:first-of-type": { color: "text.secondary" } } : undefined}
            >
              <TableCell>{m.content}</TableCell>
              <TableCell>
                <MemoryChips memory={m} showDeprecated />
              </TableCell>
              <TableCell align="right">{m.confidence.toFixed(2)}</TableCell>
              <TableCell align="right">{m.seen_count}</TableCell>
              <TableCell>
                {m.source_session_id ? (
                  <MuiLink component={RouterLink} to={`/sessions/${m.source_session_id}`}>
                    {m.alert_type ?? "session"} · {m.source_session_id.slice(0, 8)}
                  </MuiLink>
                ) : (
                  "—"
                )}
              </TableCell>
              <TableCell>{formatTime(m.updated_at)}</TableCell>
              <TableCell align="right">
                <RowActions
                  memory={m}
                  access={props.access}
                  onChanged={props.onChanged}
                  onError={props.onError}
                />
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}

/**
 * `/memories` (#24): what the reflector learned from scored sessions, filtered by category,
 * valence and state (in the URL), a page at a time; deprecate or delete where the caller may.
 */
export function MemoriesPage(props: { search: string }) {
  const { api } = useServices();
  const access = useAccess();
  const state = parseMemoryState(props.search);
  const key = formatMemoryState(state);
  const [actionError, setActionError] = useState<string | null>(null);
  // The data keeps the query it answers, so the page (and a test) can tell stale rows.
  const list = useLoad(() => api.listMemories(state).then((body) => ({ key, body })), [key]);
  const update = (patch: Partial<MemoryState>) => {
    const next = formatMemoryState({ ...state, ...patch });
    navigate(next ? `/memories?${next}` : "/memories", true);
  };
  const body = list.data?.body;
  return (
    <section>
      <Typography variant="h1" gutterBottom>
        Memories
      </Typography>
      <Typography color="text.secondary" sx={{ mb: 2 }}>
        Learnings extracted from scored investigations and given to later ones of the same project.
        A deprecated memory stays listed but is no longer given to investigations.
      </Typography>
      <Filters state={state} update={update} />
      {list.error ? (
        <Alert severity="error" sx={{ mb: 2 }}>
          Could not load memories: {list.error.message}
        </Alert>
      ) : null}
      {actionError ? (
        <Alert severity="error" sx={{ mb: 2 }} onClose={() => setActionError(null)}>
          {actionError}
        </Alert>
      ) : null}
      {!body ? (
        list.error ? null : (
          <LinearProgress aria-label="Loading memories" />
        )
      ) : (
        <Box data-testid="memories-loaded" data-query={list.data?.key}>
          <Typography variant="body2" sx={{ mb: 1 }} data-testid="memories-total">
            {body.total} {body.total === 1 ? "memory" : "memories"}
          </Typography>
          {body.memories.length === 0 ? (
            <Alert severity="info">No memories match these filters.</Alert>
          ) : (
            <MemoryTable
              body={body}
              access={access}
              onChanged={list.reload}
              onError={setActionError}
            />
          )}
          {body.total_pages > 1 ? (
            <Pagination
              count={body.total_pages}
              page={state.page}
              onChange={(_, page) => update({ page })}
              size="small"
              sx={{ p: 1 }}
              aria-label="Memory pages"
            />
          ) : null}
        </Box>
      )}
    </section>
  );
}
