import CancelIcon from "@mui/icons-material/Cancel";
import ExpandMoreIcon from "@mui/icons-material/ExpandMore";
import Accordion from "@mui/material/Accordion";
import AccordionDetails from "@mui/material/AccordionDetails";
import AccordionSummary from "@mui/material/AccordionSummary";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Dialog from "@mui/material/Dialog";
import DialogActions from "@mui/material/DialogActions";
import DialogContent from "@mui/material/DialogContent";
import DialogContentText from "@mui/material/DialogContentText";
import DialogTitle from "@mui/material/DialogTitle";
import Link from "@mui/material/Link";
import Paper from "@mui/material/Paper";
import Stack from "@mui/material/Stack";
import Step from "@mui/material/Step";
import StepLabel from "@mui/material/StepLabel";
import Stepper from "@mui/material/Stepper";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import {
  describeCancel,
  MAX_CANCEL_REASON_CHARS,
  type SessionDetail,
  TERMINAL_SESSION_STATUSES,
} from "@tarsy/contracts";
import { type MouseEvent, type ReactNode, useState } from "react";
import { can } from "../lib/access.ts";
import { CodeBlock } from "./CodeBlock.tsx";
import { CopyButton } from "./CopyButton.tsx";
import { CostText } from "./CostText.tsx";
import { useAccess, useServices } from "./context.tsx";
import { elapsedSince, formatDuration } from "./format.ts";
import { useNow } from "./hooks.ts";
import { LabelChips } from "./LabelChips.tsx";
import { navigate } from "./router.tsx";
import { StatusChip, ToneChip } from "./StatusChip.tsx";

type Stage = SessionDetail["stages"][number];

/** A button that navigates inside the app (a real link: middle-click opens a tab). */
export function NavButton(props: {
  to: string;
  children: string;
  variant?: "outlined" | "text";
  color?: "primary" | "inherit";
}) {
  const onClick = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.to);
  };
  return (
    <Button
      href={props.to}
      onClick={onClick}
      variant={props.variant ?? "outlined"}
      color={props.color ?? "primary"}
      size="small"
    >
      {props.children}
    </Button>
  );
}

/** Characters of a string as the API counts them (code points, not UTF-16 units). */
const charCount = (text: string) => Array.from(text.trim()).length;

/**
 * Cancels at one click. With `askReason` (the session's own cancel, not a chat answer's), an
 * optional reason field comes first: it goes with the cancel, and the page then says who
 * cancelled and why. Past 500 characters the field says so and the button waits.
 */
export function CancelButton(props: {
  sessionId: string;
  label: string;
  onDone: () => void;
  askReason?: boolean;
}) {
  const { api } = useServices();
  const [state, setState] = useState<"idle" | "sending" | "sent" | string>("idle");
  const [reason, setReason] = useState("");
  const left = MAX_CANCEL_REASON_CHARS - charCount(reason);
  const cancel = () => {
    setState("sending");
    api.cancel(props.sessionId, props.askReason ? reason : undefined).then(
      () => {
        setState("sent");
        props.onDone();
      },
      (err: Error) => setState(err.message),
    );
  };
  return (
    <>
      {props.askReason && state !== "sent" ? (
        <TextField
          size="small"
          label="Cancel reason"
          placeholder="optional"
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && left >= 0 && state !== "sending") cancel();
          }}
          error={left < 0}
          helperText={
            reason.trim() === ""
              ? undefined
              : left < 0
                ? `${-left} characters too long (at most ${MAX_CANCEL_REASON_CHARS})`
                : `${left} characters left`
          }
          disabled={state === "sending"}
          sx={{ width: 260 }}
        />
      ) : null}
      <Button
        variant="outlined"
        color="error"
        size="small"
        onClick={cancel}
        disabled={state === "sending" || state === "sent" || left < 0}
      >
        {state === "sent" ? "Cancel requested" : props.label}
      </Button>
      {state !== "idle" && state !== "sending" && state !== "sent" ? (
        <Alert severity="error" sx={{ py: 0 }}>
          {state}
        </Alert>
      ) : null}
    </>
  );
}

/**
 * Deletes an ended session after a confirmation, then goes to the session list (the session
 * is gone from it, and from every other open dashboard, at once).
 */
export function DeleteButton(props: { sessionId: string }) {
  const { api } = useServices();
  const [open, setOpen] = useState(false);
  const [state, setState] = useState<"idle" | "sending" | string>("idle");
  const confirm = () => {
    setState("sending");
    api.deleteSession(props.sessionId).then(
      () => {
        setOpen(false);
        navigate("/");
      },
      (err: Error) => setState(err.message),
    );
  };
  return (
    <>
      <Button variant="outlined" color="error" size="small" onClick={() => setOpen(true)}>
        Delete session
      </Button>
      <Dialog
        open={open}
        onClose={() => state !== "sending" && setOpen(false)}
        aria-labelledby="delete-session-title"
      >
        <DialogTitle id="delete-session-title">Delete this session?</DialogTitle>
        <DialogContent>
          <DialogContentText>
            It disappears from the session list, search and every dashboard now; its data is erased
            after the retention grace period. This cannot be undone from the dashboard.
          </DialogContentText>
          {state !== "idle" && state !== "sending" ? (
            <Alert severity="error" sx={{ mt: 2 }}>
              {state}
            </Alert>
          ) : null}
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setOpen(false)} disabled={state === "sending"}>
            Keep it
          </Button>
          <Button
            color="error"
            variant="contained"
            onClick={confirm}
            disabled={state === "sending"}
          >
            Delete
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}

function Stat(props: { label: string; value: string | number | ReactNode }) {
  return (
    <Box>
      <Typography component="dt" variant="caption" color="text.secondary">
        {props.label}
      </Typography>
      <Typography component="dd" variant="body2" sx={{ m: 0, fontVariantNumeric: "tabular-nums" }}>
        {typeof props.value === "number" ? props.value.toLocaleString() : props.value}
      </Typography>
    </Box>
  );
}

/** Status, chain, alert type, duration (ticking while it runs), tokens, cost and the actions. */
export function SessionHeader(props: { detail: SessionDetail; onChange: () => void }) {
  const { detail } = props;
  const now = useNow();
  const access = useAccess();
  const terminal = TERMINAL_SESSION_STATUSES.includes(detail.status);
  const tokens = detail.token_usage;
  return (
    <Paper component="header" variant="outlined" sx={{ p: 2 }}>
      <Stack
        direction="row"
        spacing={1.5}
        sx={{ alignItems: "center", flexWrap: "wrap", rowGap: 1 }}
      >
        <Typography
          variant="h5"
          component="h1"
          id="session-h"
          sx={{ display: "flex", gap: 1.5, alignItems: "center" }}
        >
          {detail.alert_type}{" "}
          <StatusChip
            status={detail.status}
            size="medium"
            title={
              detail.status === "cancelled" ? (describeCancel(detail) ?? "Cancelled") : undefined
            }
          />
          <LabelChips labels={detail.labels} />
        </Typography>
        <CopyButton
          icon="link"
          label="Copy link to this session"
          text={() => `${window.location.origin}${window.location.pathname}`}
        />
        <Box sx={{ flexGrow: 1 }} />
        <Stack direction="row" spacing={1} sx={{ alignItems: "center" }}>
          <NavButton to={`/sessions/${detail.id}/trace`}>Trace</NavButton>
          {!terminal && can(access, "cancel", detail.project) ? (
            <CancelButton
              sessionId={detail.id}
              label="Cancel session"
              onDone={props.onChange}
              askReason
            />
          ) : null}
          {terminal && can(access, "delete", detail.project) ? (
            <DeleteButton sessionId={detail.id} />
          ) : null}
        </Stack>
      </Stack>
      <Box
        component="dl"
        aria-label="Session facts"
        sx={{ display: "flex", flexWrap: "wrap", gap: 3, m: 0, mt: 1.5 }}
      >
        <Box>
          <Typography component="dt" variant="caption" color="text.secondary">
            Chain
          </Typography>
          <Typography component="dd" variant="body2" sx={{ m: 0 }}>
            <code>{detail.chain_id}</code>
          </Typography>
        </Box>
        <Stat label="Project" value={detail.project} />
        <Stat label="Session" value={detail.id} />
        <Stat
          label={terminal ? "Duration" : "Running for"}
          value={
            terminal
              ? formatDuration(detail.duration_ms)
              : elapsedSince(detail.started_at ?? detail.created_at, now)
          }
        />
        {detail.author ? <Stat label="Submitted by" value={detail.author} /> : null}
      </Box>
      <Box
        component="dl"
        aria-label="Token usage"
        sx={{ display: "flex", flexWrap: "wrap", gap: 3, m: 0, mt: 1 }}
      >
        <Stat label="Input" value={tokens.input_tokens} />
        <Stat label="Output" value={tokens.output_tokens} />
        <Stat label="Thinking" value={tokens.thinking_tokens} />
        <Stat label="Total" value={tokens.total_tokens} />
        <Stat label="Estimated cost" value={<CostText cost={detail.cost} />} />
      </Box>
      <RunbookInfo detail={detail} />
    </Paper>
  );
}

const RUNBOOK_SOURCES = {
  fetched: "fetched",
  default: "default runbook",
  none: "no runbook",
} as const;

/** Which runbook the agents used: the URL, whether it was fetched or fell back (and why), the text. */
function RunbookInfo(props: { detail: SessionDetail }) {
  const { runbook_url: url, runbook } = props.detail;
  if (!url && !runbook) return null;
  return (
    <Box component="section" aria-label="Runbook" sx={{ mt: 2 }}>
      <Stack direction="row" spacing={1} sx={{ alignItems: "center", flexWrap: "wrap" }}>
        <Typography variant="body2">
          Runbook:{" "}
          {url ? (
            <Link href={url} rel="noreferrer" target="_blank">
              {url}
            </Link>
          ) : (
            "default"
          )}
        </Typography>
        {runbook ? (
          <span data-testid="runbook-source">
            <ToneChip
              tone={runbook.source === "fetched" ? "success" : "default"}
              label={RUNBOOK_SOURCES[runbook.source]}
            />
          </span>
        ) : (
          <Typography variant="body2" color="text.secondary">
            (not resolved yet)
          </Typography>
        )}
      </Stack>
      {runbook?.error ? (
        <Alert severity="warning" sx={{ mt: 1 }}>
          Could not fetch the runbook: {runbook.error}
        </Alert>
      ) : null}
      {runbook?.content ? (
        <Accordion variant="outlined" disableGutters sx={{ mt: 1 }}>
          <AccordionSummary expandIcon={<ExpandMoreIcon />}>Runbook used</AccordionSummary>
          <AccordionDetails>
            <CodeBlock code={runbook.content} language="text" label="runbook text" />
          </AccordionDetails>
        </Accordion>
      ) : null}
    </Box>
  );
}

/** The original alert, highlighted as JSON or YAML, collapsed until asked for. */
export function AlertData(props: { code: string }) {
  return (
    <Accordion variant="outlined" disableGutters sx={{ my: 2 }}>
      <AccordionSummary expandIcon={<ExpandMoreIcon />}>Alert data</AccordionSummary>
      <AccordionDetails>
        <CodeBlock code={props.code} label="alert payload" />
      </AccordionDetails>
    </Accordion>
  );
}

/** The stages as a stepper: each one's status under its name. */
export function StageStepper(props: { stages: Stage[] }) {
  const active = props.stages.findIndex((s) => s.status === "active");
  return (
    <Stepper
      component="ol"
      aria-label="Stages"
      activeStep={active}
      alternativeLabel
      sx={{ mb: 2, p: 0, "& > li": { listStyle: "none" } }}
    >
      {props.stages.map((s) => {
        const failed = s.status === "failed" || s.status === "timed_out";
        return (
          <Step
            key={s.id}
            component="li"
            completed={s.status === "completed"}
            active={s.status === "active"}
          >
            <StepLabel
              error={failed}
              {...(s.status === "cancelled" && {
                icon: <CancelIcon color="warning" aria-hidden />,
              })}
              optional={
                <Typography variant="caption" color={failed ? "error" : "text.secondary"}>
                  {s.status.replace("_", " ")}
                </Typography>
              }
            >
              {s.stage_index}. {s.stage_name}
            </StepLabel>
          </Step>
        );
      })}
    </Stepper>
  );
}
