import Alert from "@mui/material/Alert";
import AlertTitle from "@mui/material/AlertTitle";
import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";
import { describeCancel, type SessionDetail } from "@tarsy/contracts";

const TITLES: Partial<Record<SessionDetail["status"], string>> = {
  failed: "Investigation failed",
  timed_out: "Investigation timed out",
};

/** What went wrong where: each stage or execution that did not complete, with its reason. */
function failuresOf(detail: SessionDetail): { where: string; reason: string }[] {
  const out: { where: string; reason: string }[] = [];
  for (const stage of detail.stages) {
    if (stage.kind === "chat") continue;
    const failedAgents = stage.executions.filter((e) => e.error_message);
    for (const e of failedAgents) {
      // A sub-agent's failure is its parent's to handle: named under its parent, as such.
      const parent = stage.executions.find((p) => p.id === e.parent_execution_id);
      const where = parent
        ? `${stage.stage_name} › ${parent.agent_name} › ${e.agent_name} (sub-agent)`
        : `${stage.stage_name} › ${e.agent_name}`;
      out.push({ where, reason: e.error_message ?? "" });
    }
    if (stage.error_message && !failedAgents.some((e) => e.error_message === stage.error_message))
      out.push({ where: stage.stage_name, reason: stage.error_message });
  }
  return out;
}

/**
 * The reason a session did not complete, as a card near the top of the page: the session's own
 * reason, then every stage and agent that failed with theirs. A completed session that carries
 * a message (a warning) gets the same card in a milder colour.
 */
export function ErrorCard(props: { detail: SessionDetail }) {
  const { detail } = props;
  if (detail.status === "cancelled") return <CancelledCard detail={detail} />;
  const title = TITLES[detail.status];
  if (!title && !detail.error_message) return null;
  const failures = title ? failuresOf(detail) : [];
  const severe = detail.status === "failed" || detail.status === "timed_out";
  return (
    <Alert
      component="section"
      role="region"
      aria-labelledby="error-h"
      severity={severe ? "error" : "warning"}
      variant="outlined"
      sx={{ mt: 2 }}
    >
      <AlertTitle id="error-h" component="h2">
        {title ?? "Warning"}
      </AlertTitle>
      {detail.error_message ? (
        <Typography variant="body2" data-testid="session-error">
          {detail.error_message}
        </Typography>
      ) : null}
      {failures.length > 0 ? (
        <Box component="dl" aria-label="Failures" sx={{ m: 0, mt: 1 }}>
          {failures.map((f) => (
            <Box key={`${f.where}:${f.reason}`} sx={{ mt: 0.5 }}>
              <Typography component="dt" variant="body2" sx={{ fontWeight: 600 }}>
                {f.where}
              </Typography>
              <Typography component="dd" variant="body2" sx={{ m: 0, ml: 2 }}>
                {f.reason}
              </Typography>
            </Box>
          ))}
        </Box>
      ) : null}
    </Alert>
  );
}

/**
 * A cancelled session: a cancellation, never an error (no error colour, no failures list):
 * who cancelled it and why, when recorded ("Cancelled by alice: duplicate of INC-123").
 */
function CancelledCard(props: { detail: SessionDetail }) {
  const by = describeCancel(props.detail);
  return (
    <Alert
      component="section"
      role="region"
      aria-labelledby="cancelled-h"
      severity="info"
      variant="outlined"
      sx={{ mt: 2 }}
    >
      <AlertTitle id="cancelled-h" component="h2">
        Investigation cancelled
      </AlertTitle>
      {by ? (
        <Typography variant="body2" data-testid="session-cancelled">
          {by}
        </Typography>
      ) : null}
    </Alert>
  );
}
