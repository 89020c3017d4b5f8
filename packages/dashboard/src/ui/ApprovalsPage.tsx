import { Alert, Box, LinearProgress, Paper, TextField, Typography } from "@mui/material";
import { type ActionStatus, ActionStatusSchema } from "@tarsy/contracts";
import { can } from "../lib/access.ts";
import { ActionCard } from "./ActionCard.tsx";
import { useAccess, useLoad, useServices } from "./context.tsx";
import { NATIVE_SELECT } from "./fields.ts";
import { useChannel, useThrottled } from "./hooks.ts";
import { navigate } from "./router.tsx";

type StatusFilter = ActionStatus | "all";

const FILTERS: { value: StatusFilter; label: string }[] = [
  { value: "pending", label: "Waiting for approval" },
  { value: "approved", label: "Approved" },
  { value: "denied", label: "Denied" },
  { value: "expired", label: "Expired" },
  { value: "cancelled", label: "Cancelled" },
  { value: "all", label: "All" },
];

/** `?status=` of the page's URL; pending by default. */
export function parseStatusFilter(search: string): StatusFilter {
  const raw = new URLSearchParams(search).get("status") ?? "pending";
  if (raw === "all") return "all";
  const parsed = ActionStatusSchema.safeParse(raw);
  return parsed.success ? parsed.data : "pending";
}

/**
 * Approvals: the action agents' mutating calls, each with its exact tool and arguments
 * (masked), the agent's reason and evidence, and, for a pending one, Approve and Deny. The
 * list follows every request's changes live (`action.status` on the sessions channel).
 */
export function ApprovalsPage(props: { search: string }) {
  const { api } = useServices();
  const access = useAccess();
  const status = parseStatusFilter(props.search);
  const load = useLoad(() => api.listActions(status === "all" ? {} : { status }), [status]);
  const refresh = useThrottled(load.reload, 250);
  useChannel("sessions", {
    onEvent: (frame) => {
      if (frame.payload.type === "action.status") refresh();
    },
    // Back after a drop, or more was missed than can be replayed: read the list again.
    onConfirmed: refresh,
    onOverflow: refresh,
  });
  const actions = load.data?.actions ?? [];
  return (
    <Box component="section" aria-labelledby="approvals-h">
      <Typography variant="h1" id="approvals-h" gutterBottom>
        Approvals
      </Typography>
      <Typography color="text.secondary" sx={{ mb: 2 }}>
        Every call that changes something (a mutating tool of an action agent) waits here for a
        person, unless its agent is configured to approve automatically. A request that nobody
        decides before it times out counts as denied.
      </Typography>
      <Paper
        component="form"
        variant="outlined"
        aria-label="Filter approvals"
        onSubmit={(e) => e.preventDefault()}
        sx={{ p: 2, mb: 2 }}
      >
        <TextField
          id="approvals-status"
          select
          size="small"
          label="Status"
          value={status}
          onChange={(e) => navigate(`/actions?status=${e.target.value}`)}
          slotProps={NATIVE_SELECT}
          sx={{ minWidth: 220 }}
        >
          {FILTERS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </TextField>
      </Paper>
      {load.error ? (
        <Alert severity="error">Could not load the approvals: {load.error.message}</Alert>
      ) : load.data === null ? (
        <LinearProgress aria-label="Loading approvals" />
      ) : actions.length === 0 ? (
        <Typography data-testid="no-actions">
          {status === "pending" ? "Nothing is waiting for approval." : "No action requests."}
        </Typography>
      ) : (
        actions.map((action) => (
          <ActionCard
            key={action.id}
            action={action}
            showSession
            mayDecide={can(access, "approve", action.project)}
            onChanged={load.reload}
          />
        ))
      )}
    </Box>
  );
}
