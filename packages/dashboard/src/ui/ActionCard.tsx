import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Link as MuiLink,
  Stack,
  TextField,
  Typography,
} from "@mui/material";
import type { Action, ActionCallStatus, ActionStatus } from "@tarsy/contracts";
import { useId, useState } from "react";
import { Link as RouterLink } from "react-router";
import { CodeBlock } from "./CodeBlock.tsx";
import { useServices } from "./context.tsx";
import { formatDuration, formatTime, prettyJson } from "./format.ts";
import { useNow } from "./hooks.ts";
import { type Tone, ToneChip } from "./StatusChip.tsx";

const STATUS: Record<ActionStatus, { label: string; tone: Tone }> = {
  pending: { label: "waiting for approval", tone: "warning" },
  approved: { label: "approved", tone: "success" },
  denied: { label: "denied", tone: "error" },
  expired: { label: "expired (denied)", tone: "error" },
  cancelled: { label: "cancelled", tone: "default" },
};

const CALL: Record<ActionCallStatus, { label: string; tone: Tone } | null> = {
  not_started: null,
  started: { label: "call running", tone: "info" },
  succeeded: { label: "call succeeded", tone: "success" },
  failed: { label: "call failed", tone: "error" },
  unknown: { label: "outcome unknown: check by hand", tone: "error" },
};

/** The decision's line: who decided, when, and their comment. */
function decisionText(action: Action): string | null {
  if (action.status === "pending" || !action.decided_by) return null;
  const verb =
    action.status === "expired"
      ? "Timed out, counted as denied"
      : action.status === "cancelled"
        ? "Cancelled"
        : action.status === "approved"
          ? `Approved by ${action.decided_by}`
          : `Denied by ${action.decided_by}`;
  const comment = action.comment ? `: “${action.comment}”` : "";
  return `${verb}, ${formatTime(action.decided_at)}${comment}`;
}

/** Approve / Deny with an optional comment; the API's refusal (four eyes, decided) is shown. */
function DecideForm(props: { action: Action; onDecided: () => void }) {
  const { api } = useServices();
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const decide = (decision: "approve" | "deny") => {
    setBusy(true);
    setError(null);
    api.decideAction(props.action.id, decision, comment).then(
      () => {
        setBusy(false);
        props.onDecided();
      },
      (err: Error) => {
        setBusy(false);
        setError(err.message);
        // Decided meanwhile (another person, the timeout): show what it is now.
        props.onDecided();
      },
    );
  };
  return (
    <Box
      component="form"
      aria-label={`Decide ${props.action.tool_name}`}
      onSubmit={(e) => e.preventDefault()}
      sx={{ mt: 2 }}
    >
      <TextField
        id={`${id}-comment`}
        label="Comment (optional)"
        size="small"
        fullWidth
        multiline
        minRows={1}
        value={comment}
        onChange={(e) => setComment(e.target.value)}
        slotProps={{ htmlInput: { maxLength: 4000 } }}
      />
      <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
        <Button
          variant="contained"
          color="success"
          disabled={busy}
          onClick={() => decide("approve")}
        >
          Approve
        </Button>
        <Button variant="outlined" color="error" disabled={busy} onClick={() => decide("deny")}>
          Deny
        </Button>
      </Stack>
      {error ? (
        <Alert severity="error" sx={{ mt: 1 }} role="alert">
          {error}
        </Alert>
      ) : null}
    </Box>
  );
}

/**
 * One action request as a person decides it: the exact tool and arguments (masked), the
 * agent's stated reason and evidence, when it times out, and, once decided, who decided and
 * what the call did. `mayDecide`: the caller holds `approve` on the session's project.
 */
export function ActionCard(props: {
  action: Action;
  mayDecide: boolean;
  /** Link to the session (on the Approvals page; not on the session's own page). */
  showSession?: boolean;
  onChanged: () => void;
}) {
  const { action } = props;
  const now = useNow();
  const headingId = useId();
  const status = STATUS[action.status];
  const call = CALL[action.call_status];
  const decision = decisionText(action);
  const expiresIn =
    action.status === "pending" && action.expires_at ? Date.parse(action.expires_at) - now : null;
  return (
    <Card
      variant="outlined"
      component="article"
      aria-labelledby={headingId}
      data-testid="action-request"
      data-status={action.status}
      sx={{ mb: 2, borderColor: action.status === "pending" ? "warning.main" : undefined }}
    >
      <CardContent>
        <Stack
          direction="row"
          spacing={1}
          useFlexGap
          sx={{ alignItems: "center", flexWrap: "wrap" }}
        >
          <Typography variant="subtitle1" component="h3" id={headingId} sx={{ fontWeight: 600 }}>
            {action.tool_name}
          </Typography>
          <ToneChip label={status.label} tone={status.tone} />
          {call ? <ToneChip label={call.label} tone={call.tone} /> : null}
          {action.approval_mode === "auto" ? <ToneChip label="auto-approved by config" /> : null}
        </Stack>
        <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
          Agent {action.agent_name}
          {props.showSession ? (
            <>
              {" · "}
              <MuiLink component={RouterLink} to={`/sessions/${action.session_id}`}>
                {action.alert_type} session {action.session_id.slice(0, 8)}
              </MuiLink>
              {` · project ${action.project}`}
            </>
          ) : null}
          {` · requested ${formatTime(action.requested_at)}`}
          {action.requested_by ? ` · alert submitted by ${action.requested_by}` : ""}
        </Typography>
        {expiresIn !== null ? (
          <Typography variant="body2" sx={{ mt: 0.5 }} data-testid="action-expiry">
            {expiresIn > 0
              ? `Counts as denied in ${formatDuration(expiresIn)} (at ${formatTime(action.expires_at)})`
              : "Timing out now"}
          </Typography>
        ) : null}

        <Typography variant="overline" component="h4" sx={{ display: "block", mt: 1.5 }}>
          The agent's reason and evidence
        </Typography>
        <Typography
          variant="body2"
          component="blockquote"
          data-testid="action-reason"
          sx={{ m: 0, pl: 1.5, borderLeft: 3, borderColor: "divider", whiteSpace: "pre-wrap" }}
        >
          {action.reason.trim() || "(the agent gave no reason)"}
        </Typography>

        <Typography variant="overline" component="h4" sx={{ display: "block", mt: 1.5 }}>
          Exact call
        </Typography>
        <CodeBlock
          code={prettyJson(action.arguments)}
          language="json"
          label={`Arguments of ${action.tool_name}`}
          maxHeight={240}
        />
        {action.dry_run ? (
          <Box data-testid="action-dry-run">
            <Typography variant="overline" component="h4" sx={{ display: "block", mt: 1.5 }}>
              Dry run ({action.dry_run.status === "succeeded" ? "what it would do" : "failed"})
            </Typography>
            <CodeBlock
              code={action.dry_run.result}
              label={`Dry run of ${action.tool_name}`}
              maxHeight={240}
            />
          </Box>
        ) : null}

        {decision ? (
          <Typography variant="body2" sx={{ mt: 1.5 }} data-testid="action-decision">
            {decision}
          </Typography>
        ) : null}
        {action.result !== null ? (
          <>
            <Typography variant="overline" component="h4" sx={{ display: "block", mt: 1.5 }}>
              What the server answered
            </Typography>
            <CodeBlock
              code={action.result}
              label={`Result of ${action.tool_name}`}
              maxHeight={240}
            />
          </>
        ) : null}

        {action.status === "pending" ? (
          props.mayDecide ? (
            <DecideForm action={action} onDecided={props.onChanged} />
          ) : (
            <Typography variant="body2" color="text.secondary" sx={{ mt: 1.5 }}>
              You may not decide this request (it needs the approve permission in project{" "}
              {action.project}).
            </Typography>
          )
        ) : null}
      </CardContent>
    </Card>
  );
}
