import ExpandMoreIcon from "@mui/icons-material/ExpandMore";
import Accordion from "@mui/material/Accordion";
import AccordionDetails from "@mui/material/AccordionDetails";
import AccordionSummary from "@mui/material/AccordionSummary";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import Stack from "@mui/material/Stack";
import Typography from "@mui/material/Typography";
import { ForcedConclusionReasonSchema, forcedConclusionLabel } from "@tarsy/contracts";
import { createContext, memo, type ReactNode, useContext } from "react";
import { subAgentResultText, type TimelineItem } from "../lib/timeline.ts";
import { CodeBlock } from "./CodeBlock.tsx";
import { CopyButton } from "./CopyButton.tsx";
import { prettyJson, wasMasked } from "./format.ts";
import { Markdown } from "./Markdown.tsx";
import { StatusChip, ToneChip } from "./StatusChip.tsx";

const LABELS: Record<TimelineItem["event_type"], string> = {
  llm_thinking: "Thinking",
  llm_response: "Response",
  llm_tool_call: "Tool call",
  mcp_tool_summary: "Tool result summary",
  error: "Error",
  user_question: "Question",
  executive_summary: "Executive summary",
  final_analysis: "Final analysis",
  code_execution: "Code execution",
  google_search_result: "Search result",
  url_context_result: "URL context",
  provider_fallback: "Provider fallback",
  skill_loaded: "Skill loaded",
  memory_injected: "Lessons from past investigations",
  task_assigned: "Task assigned",
  sub_agent_result: "Sub-agent result",
  execution_resumed: "Interrupted",
};

/** Longer texts of other kinds start collapsed. */
const LONG = 1800;

/** Which collapsible parts are open, kept above the virtualised list (rows unmount). */
export interface ExpandedState {
  isOpen(key: string): boolean;
  toggle(key: string, open: boolean): void;
}
export const ExpandedContext = createContext<ExpandedState>({
  isOpen: () => false,
  toggle: () => undefined,
});

/** The URL of one timeline item (`#event-<id>` on the session page). */
export function eventLink(eventId: string): string {
  const { origin, pathname, search } = window.location;
  return `${origin}${pathname}${search}#event-${eventId}`;
}

const mono = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";

/** Read by screen readers, not shown. */
const srOnly = {
  position: "absolute",
  width: 1,
  height: 1,
  overflow: "hidden",
  clip: "rect(0 0 0 0)",
  whiteSpace: "nowrap",
} as const;

/**
 * A collapsible part whose body renders only while open (a 100 KB result costs nothing shut).
 * `kind` starts the toggle's accessible name ("Tool call demo-cluster.get_pods …") unseen:
 * the entry's heading already shows it.
 */
function Collapsible(props: {
  openKey: string;
  summary: ReactNode;
  kind?: string;
  children: () => ReactNode;
}) {
  const expanded = useContext(ExpandedContext);
  const open = expanded.isOpen(props.openKey);
  return (
    <Accordion
      expanded={open}
      onChange={(_, next) => expanded.toggle(props.openKey, next)}
      disableGutters
      variant="outlined"
      slotProps={{ transition: { timeout: 0 } }}
      sx={{ "&::before": { display: "none" } }}
    >
      <AccordionSummary expandIcon={<ExpandMoreIcon />}>
        {props.kind ? (
          <Box component="span" sx={srOnly}>
            {props.kind}{" "}
          </Box>
        ) : null}
        {props.summary}
      </AccordionSummary>
      <AccordionDetails>{open ? props.children() : null}</AccordionDetails>
    </Accordion>
  );
}

function toolName(item: TimelineItem): string {
  const meta = item.metadata ?? {};
  return [meta.server_name ?? meta.server, meta.tool_name ?? meta.tool].filter(Boolean).join(".");
}

function ToolCall(props: { item: TimelineItem }) {
  const { item } = props;
  const meta = item.metadata ?? {};
  const name = toolName(item) || "tool";
  const args = meta.arguments ?? meta.tool_arguments;
  const masked = wasMasked(item.content);
  const running = item.status === "streaming";
  return (
    <Collapsible
      openKey={`tool:${item.event_id}`}
      kind="Tool call"
      summary={
        <Stack
          direction="row"
          spacing={1}
          sx={{ alignItems: "center", flexWrap: "wrap", rowGap: 0.5 }}
        >
          <Typography component="code" sx={{ fontFamily: mono, fontSize: "0.875rem" }}>
            {name}
          </Typography>
          {running ? <ToneChip label="running…" tone="info" /> : null}
          {meta.is_error ? <ToneChip tone="error" label="error" /> : null}
          {masked ? <ToneChip tone="warning" label="masked" /> : null}
          {!running && item.content ? (
            <Typography variant="caption" color="text.secondary">
              {item.content.length.toLocaleString()} chars
            </Typography>
          ) : null}
        </Stack>
      }
    >
      {() => (
        <Stack spacing={1.5}>
          {args !== undefined ? (
            <Box>
              <Typography variant="subtitle2" component="h4" gutterBottom>
                Arguments
              </Typography>
              <CodeBlock code={prettyJson(args)} language="json" label={`arguments of ${name}`} />
            </Box>
          ) : null}
          {item.content ? (
            <Box>
              <Typography variant="subtitle2" component="h4" gutterBottom>
                {meta.is_error ? "Error" : "Result"}
              </Typography>
              <CodeBlock code={item.content} label={`result of ${name}`} />
            </Box>
          ) : null}
        </Stack>
      )}
    </Collapsible>
  );
}

function ProviderFallback(props: { item: TimelineItem }) {
  const meta = props.item.metadata ?? {};
  const skipped = Array.isArray(meta.skipped_incompatible) ? meta.skipped_incompatible : [];
  return (
    <Alert severity="warning" variant="outlined" icon={false}>
      <Typography component="p" variant="body2">
        <code>{String(meta.original_provider ?? "?")}</code> →{" "}
        <code>{String(meta.fallback_provider ?? "?")}</code>
        {meta.fallback_backend ? ` (${String(meta.fallback_backend)})` : ""}
      </Typography>
      {meta.reason ? (
        <Typography
          component="pre"
          variant="body2"
          sx={{ fontFamily: mono, whiteSpace: "pre-wrap", m: 0, mt: 0.5 }}
        >
          {String(meta.reason)}
        </Typography>
      ) : null}
      {skipped.length > 0 ? (
        <Typography variant="body2">
          Skipped (no Gemini native tools): {skipped.map(String).join(", ")}
        </Typography>
      ) : null}
    </Alert>
  );
}

function PlainText(props: { text: string; muted?: boolean }) {
  return (
    <Typography
      component="pre"
      variant="body2"
      color={props.muted ? "text.secondary" : "text.primary"}
      sx={{ fontFamily: "inherit", whiteSpace: "pre-wrap", overflowWrap: "anywhere", m: 0 }}
    >
      {props.text}
    </Typography>
  );
}

function Body(props: { item: TimelineItem }) {
  const { item } = props;
  const streaming = item.status === "streaming";
  switch (item.event_type) {
    case "llm_tool_call":
      return <ToolCall item={item} />;
    case "provider_fallback":
      return <ProviderFallback item={item} />;
    case "llm_thinking":
      return (
        <Collapsible
          openKey={`thinking:${item.event_id}`}
          summary={
            <Typography variant="body2" color="text.secondary" noWrap sx={{ maxWidth: "60ch" }}>
              {streaming ? "Thinking…" : `Thinking (${item.content.length.toLocaleString()} chars)`}
            </Typography>
          }
        >
          {() => <PlainText text={item.content} muted />}
        </Collapsible>
      );
    case "error":
      return (
        <Alert severity="error" variant="outlined">
          <PlainText text={item.content} />
        </Alert>
      );
    case "sub_agent_result": {
      // The outcome as the parent received it: the answer as markdown, a failure as text.
      const text = subAgentResultText(item.content);
      return item.metadata?.status === "completed" ? (
        <Markdown text={text} />
      ) : (
        <PlainText text={text} />
      );
    }
    case "llm_response":
    case "mcp_tool_summary":
    case "final_analysis":
    case "executive_summary":
      return <Markdown text={item.content} />;
    default:
      return item.content.length > LONG && !streaming ? (
        <Collapsible
          openKey={`long:${item.event_id}`}
          kind={LABELS[item.event_type]}
          summary={
            <Typography variant="body2" noWrap sx={{ maxWidth: "70ch" }}>
              {item.content.slice(0, 160)}…
            </Typography>
          }
        >
          {() => <PlainText text={item.content} />}
        </Collapsible>
      ) : (
        <PlainText text={item.content} />
      );
  }
}

/** A `sub_agent_result`'s sub-agent and how it ended, beside the entry's label. */
function SubAgentOutcome(props: { item: TimelineItem }) {
  const meta = props.item.metadata ?? {};
  return (
    <>
      <Typography variant="body2" component="span" sx={{ fontWeight: 600 }}>
        {typeof meta.agent_name === "string" ? meta.agent_name : "sub-agent"}
      </Typography>
      {typeof meta.status === "string" ? <StatusChip status={meta.status} /> : null}
    </>
  );
}

/** One timeline item: its kind, badges, a deep-link button and its body. */
export const Entry = memo(function Entry(props: { item: TimelineItem; highlighted?: boolean }) {
  const { item } = props;
  const streaming = item.status === "streaming";
  const meta = item.metadata ?? {};
  const label = meta.kind === "runbook_fallback" ? "Runbook" : LABELS[item.event_type];
  return (
    <Box
      component="article"
      id={`event-${item.event_id}`}
      data-event-id={item.event_id}
      data-event-type={item.event_type}
      aria-busy={streaming}
      aria-label={label}
      tabIndex={-1}
      sx={{
        py: 1,
        px: 1.5,
        borderLeft: 3,
        borderColor: props.highlighted ? "primary.main" : "transparent",
        bgcolor: props.highlighted ? "action.selected" : "transparent",
        borderRadius: 1,
        transition: "background-color 0.6s",
      }}
    >
      <Stack direction="row" spacing={1} sx={{ alignItems: "center", mb: 0.5, minHeight: 28 }}>
        <Typography variant="overline" color="text.secondary" sx={{ lineHeight: 1.5 }}>
          {label}
        </Typography>
        {streaming ? <CircularProgress size={12} aria-label="streaming" /> : null}
        {streaming && item.retries ? (
          <ToneChip
            tone="warning"
            title="the LLM call was cut and is retried"
            label={`retried${item.retries > 1 ? ` ×${item.retries}` : ""}`}
          />
        ) : null}
        {item.status !== "completed" && !streaming ? <StatusChip status={item.status} /> : null}
        {meta.forced_conclusion ? (
          <ToneChip
            tone="warning"
            title={forcedConclusionTitle(meta.reason)}
            label={`forced conclusion · ${forcedConclusionLabel(forcedReason(meta.reason))}`}
          />
        ) : null}
        {item.event_type === "mcp_tool_summary" ? (
          <ToneChip tone="info" label="summarized" />
        ) : null}
        {item.event_type === "provider_fallback" ? (
          <ToneChip tone="warning" label="provider fallback" />
        ) : null}
        {item.event_type === "sub_agent_result" ? <SubAgentOutcome item={item} /> : null}
        {item.event_type === "execution_resumed" ? (
          <ToneChip
            tone={meta.mode === "resumed" ? "info" : "warning"}
            title={
              meta.mode === "resumed"
                ? "a new attempt continued the stored conversation: finished steps were not run again"
                : "the stored conversation could not be continued: the agent started over"
            }
            label={meta.mode === "resumed" ? "resumed" : "started over"}
          />
        ) : null}
        <Box sx={{ flexGrow: 1 }} />
        <CopyButton
          icon="link"
          label={`Copy link to this ${label.toLowerCase()}`}
          text={() => eventLink(item.event_id)}
        />
      </Stack>
      <Body item={item} />
    </Box>
  );
});

/** A forced conclusion's reason; events from before reasons were kept had only the iteration limit. */
function forcedReason(reason: unknown) {
  return ForcedConclusionReasonSchema.safeParse(reason).data ?? "max_iterations";
}

function forcedConclusionTitle(reason: unknown): string {
  return forcedReason(reason) === "time_budget"
    ? "the agent was near its deadline and concluded with what it had (its time budget)"
    : "the agent used all its iterations and concluded with what it had";
}
