import ExpandMoreIcon from "@mui/icons-material/ExpandMore";
import Accordion from "@mui/material/Accordion";
import AccordionDetails from "@mui/material/AccordionDetails";
import AccordionSummary from "@mui/material/AccordionSummary";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import Paper from "@mui/material/Paper";
import Stack from "@mui/material/Stack";
import Typography from "@mui/material/Typography";
import type { TraceListResponse } from "@tarsy/contracts";
import type { ReactNode } from "react";
import { CodeBlock } from "./CodeBlock.tsx";
import { useLoad, useServices } from "./context.tsx";
import { formatTime, formatUsd, prettyJson } from "./format.ts";
import { navigate } from "./router.tsx";
import { NavButton } from "./SessionHeader.tsx";
import { ToneChip } from "./StatusChip.tsx";

function Loading() {
  return (
    <Stack direction="row" spacing={1} aria-busy="true" sx={{ alignItems: "center" }}>
      <CircularProgress size={16} aria-hidden /> <span>Loading interaction…</span>
    </Stack>
  );
}

function Section(props: { title: string; children: ReactNode }) {
  return (
    <Box sx={{ mt: 2 }}>
      <Typography variant="subtitle2" component="h4" gutterBottom>
        {props.title}
      </Typography>
      {props.children}
    </Box>
  );
}

/** An interaction's detail: a section named by its heading, its error first. */
function DetailFrame(props: {
  id: string;
  title: string;
  error: string | null;
  children: ReactNode;
}) {
  return (
    <Box component="section" aria-labelledby={props.id}>
      <Typography variant="h6" component="h3" id={props.id}>
        {props.title}
      </Typography>
      {props.error ? (
        <Alert severity="error" sx={{ mt: 1 }}>
          {props.error}
        </Alert>
      ) : null}
      {props.children}
    </Box>
  );
}

/**
 * A call's prompt-cache hit or write (ADR-0026): input tokens are uncached, so reads and writes
 * are shown beside them; nothing when the provider reported neither.
 */
function cacheSummary(i: {
  cache_read_tokens: number | null;
  cache_creation_tokens: number | null;
}): string {
  const read = i.cache_read_tokens ?? 0;
  const write = i.cache_creation_tokens ?? 0;
  return `${read > 0 ? ` · ${read} cache read` : ""}${write > 0 ? ` · ${write} cache write` : ""}`;
}

function LlmDetail(props: { sessionId: string; id: string }) {
  const { api } = useServices();
  const { data, error } = useLoad(() => api.llmInteraction(props.sessionId, props.id), [props.id]);
  if (error) return <Alert severity="error">{error.message}</Alert>;
  if (!data) return <Loading />;
  return (
    <DetailFrame
      id={`llm-h-${data.id}`}
      title={`LLM interaction: ${data.interaction_type} · ${data.model_name}`}
      error={data.error_message}
    >
      <Typography variant="body2" color="text.secondary">
        {data.provider ?? ""} · tokens {data.input_tokens ?? 0} in / {data.output_tokens ?? 0} out
        {cacheSummary(data)}
        {data.reasoning_effort ? ` · effort ${data.reasoning_effort}` : ""} ·{" "}
        {data.duration_ms ?? "—"} ms
      </Typography>
      <Section title="Conversation as sent">
        <Box component="ol" aria-label="Conversation" sx={{ listStyle: "none", m: 0, p: 0 }}>
          {data.conversation.map((m, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the conversation is fixed and ordered
            <Box component="li" key={i} sx={{ mb: 1.5 }}>
              <Typography component="strong" variant="overline" sx={{ display: "block" }}>
                {m.role}
                {m.tool_name ? ` (${m.tool_name})` : ""}
              </Typography>
              <CodeBlock code={m.content} language="text" label={`${m.role} message ${i + 1}`} />
              {m.tool_calls ? (
                <CodeBlock
                  code={prettyJson(m.tool_calls)}
                  language="json"
                  label={`tool calls of message ${i + 1}`}
                />
              ) : null}
            </Box>
          ))}
        </Box>
      </Section>
      {data.thinking_content ? (
        <Section title="Thinking">
          <CodeBlock code={data.thinking_content} language="text" label="thinking" />
        </Section>
      ) : null}
      <Section title="Response">
        <CodeBlock code={data.response_text ?? ""} language="text" label="response" />
      </Section>
      {data.tool_calls ? (
        <Section title="Tool calls">
          <CodeBlock code={prettyJson(data.tool_calls)} language="json" label="tool calls" />
        </Section>
      ) : null}
    </DetailFrame>
  );
}

function McpDetail(props: { sessionId: string; id: string }) {
  const { api } = useServices();
  const { data, error } = useLoad(() => api.mcpInteraction(props.sessionId, props.id), [props.id]);
  if (error) return <Alert severity="error">{error.message}</Alert>;
  if (!data) return <Loading />;
  return (
    <DetailFrame
      id={`mcp-h-${data.id}`}
      title={`MCP ${data.interaction_type}: ${data.server_name}${data.tool_name ? `.${data.tool_name}` : ""}`}
      error={data.error_message}
    >
      <Section title="Arguments">
        <CodeBlock code={prettyJson(data.tool_arguments)} language="json" label="arguments" />
      </Section>
      <Section title="Result">
        <CodeBlock code={prettyJson(data.tool_result)} label="result" />
      </Section>
      {data.available_tools != null ? (
        <Accordion variant="outlined" disableGutters sx={{ mt: 2 }}>
          <AccordionSummary expandIcon={<ExpandMoreIcon />}>Available tools</AccordionSummary>
          <AccordionDetails>
            <CodeBlock code={prettyJson(data.available_tools)} language="json" label="tools" />
          </AccordionDetails>
        </Accordion>
      ) : null}
    </DetailFrame>
  );
}

/** One interaction as an accordion; its detail loads when opened (`?llm=`/`?mcp=` opens one). */
function Interaction(props: {
  open: boolean;
  onToggle: (open: boolean) => void;
  summary: ReactNode;
  meta: ReactNode;
  failed: boolean;
  children: () => ReactNode;
}) {
  return (
    <Accordion
      expanded={props.open}
      onChange={(_, open) => props.onToggle(open)}
      variant="outlined"
      disableGutters
      slotProps={{ transition: { timeout: 0 } }}
    >
      <AccordionSummary expandIcon={<ExpandMoreIcon />}>
        <Stack direction="row" spacing={1} sx={{ alignItems: "center", flexWrap: "wrap" }}>
          <span>{props.summary}</span>
          <Typography component="span" variant="caption" color="text.secondary">
            {props.meta}
          </Typography>
          {props.failed ? <ToneChip tone="error" label="error" /> : null}
        </Stack>
      </AccordionSummary>
      <AccordionDetails>{props.open ? props.children() : null}</AccordionDetails>
    </Accordion>
  );
}

/** LLM and MCP interactions of one execution in the order they happened. */
function interleave<A extends { created_at: string }, B extends { created_at: string }>(
  a: A[],
  b: B[],
): (A | B)[] {
  return [...a, ...b].sort((x, y) => x.created_at.localeCompare(y.created_at));
}

type TraceExecution = TraceListResponse["stages"][number]["executions"][number];

const interactionsOf = (ex: TraceExecution) =>
  ex.llm_interactions.length + ex.mcp_interactions.length;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * A stage's executions as the trace shows them: its own agents, each with the sub-agents it
 * dispatched (in dispatch order). A sub-agent whose parent is not in the stage stands alone.
 */
function nestExecutions(
  executions: TraceExecution[],
): { execution: TraceExecution; subAgents: TraceExecution[] }[] {
  const ids = new Set(executions.map((e) => e.execution_id));
  const top = executions.filter((e) => !e.parent_execution_id || !ids.has(e.parent_execution_id));
  return top.map((execution) => ({
    execution,
    subAgents: executions.filter((e) => e.parent_execution_id === execution.execution_id),
  }));
}

/**
 * Stage → execution → LLM and MCP interactions, each an accordion; `?llm=` / `?mcp=` opens one.
 * An orchestrating agent's sub-agents follow its own interactions in a "Sub-agents" section,
 * and its interaction count includes theirs.
 */
export function TracePage(props: { sessionId: string; search: string }) {
  const { api } = useServices();
  const { data, error } = useLoad(() => api.trace(props.sessionId), [props.sessionId]);
  const q = new URLSearchParams(props.search);
  const base = `/sessions/${props.sessionId}/trace`;
  const llm = q.get("llm");
  const mcp = q.get("mcp");
  // The URL names what is open, so a copied link opens the same interaction.
  const toggle = (kind: "llm" | "mcp", id: string, open: boolean) => {
    const next = new URLSearchParams(props.search);
    if (open) next.set(kind, id);
    else next.delete(kind);
    const query = next.toString();
    navigate(query ? `${base}?${query}` : base, true);
  };
  const llmItem = (i: {
    id: string;
    interaction_type: string;
    iteration: number | null;
    total_tokens: number | null;
    cache_read_tokens: number | null;
    cache_creation_tokens: number | null;
    estimated_cost_usd: number | null;
    error_message: string | null;
    created_at: string;
  }) => (
    <Interaction
      key={i.id}
      open={llm === i.id}
      onToggle={(open) => toggle("llm", i.id, open)}
      summary={`LLM ${i.interaction_type}${i.iteration != null ? ` #${i.iteration}` : ""} · ${i.total_tokens ?? 0} tok${cacheSummary(i)}${i.estimated_cost_usd != null ? ` · ${formatUsd(i.estimated_cost_usd)}` : ""}`}
      meta={formatTime(i.created_at)}
      failed={i.error_message != null}
    >
      {() => <LlmDetail sessionId={props.sessionId} id={i.id} />}
    </Interaction>
  );
  const interactions = (ex: TraceExecution) =>
    interleave(ex.llm_interactions, ex.mcp_interactions).map((i) =>
      "model_name" in i ? (
        llmItem(i)
      ) : (
        <Interaction
          key={i.id}
          open={mcp === i.id}
          onToggle={(open) => toggle("mcp", i.id, open)}
          summary={`MCP ${i.interaction_type} ${i.server_name}${i.tool_name ? `.${i.tool_name}` : ""}`}
          meta={`${formatTime(i.created_at)}${i.duration_ms != null ? ` · ${i.duration_ms} ms` : ""}`}
          failed={i.error_message != null}
        >
          {() => <McpDetail sessionId={props.sessionId} id={i.id} />}
        </Interaction>
      ),
    );
  return (
    <Box component="section" sx={{ pb: 6 }}>
      <NavButton to={`/sessions/${props.sessionId}`} variant="text" color="inherit">
        ← Back to session
      </NavButton>
      <Typography variant="h5" component="h1" sx={{ my: 1 }}>
        Trace
      </Typography>
      {error ? <Alert severity="error">{error.message}</Alert> : null}
      {!data && !error ? <Loading /> : null}
      <Stack spacing={3}>
        {data?.stages.map((stage) => (
          <Box component="section" key={stage.stage_id} aria-label={`Stage ${stage.stage_name}`}>
            <Typography variant="h6" component="h2" gutterBottom>
              {stage.stage_name}
            </Typography>
            <Stack spacing={2}>
              {nestExecutions(stage.executions).map(({ execution: ex, subAgents }) => {
                const total =
                  interactionsOf(ex) + subAgents.reduce((n, sub) => n + interactionsOf(sub), 0);
                return (
                  <Paper
                    key={ex.execution_id}
                    variant="outlined"
                    component="section"
                    aria-label={`Agent ${ex.agent_name}`}
                    data-execution-id={ex.execution_id}
                    sx={{ p: 1.5 }}
                  >
                    <Stack
                      direction="row"
                      spacing={1}
                      sx={{ alignItems: "center", flexWrap: "wrap", mb: 1 }}
                    >
                      <Typography variant="subtitle1" component="h3">
                        {ex.agent_name}
                      </Typography>
                      <ToneChip label={plural(total, "interaction")} />
                      {subAgents.length > 0 ? (
                        <ToneChip tone="info" label={plural(subAgents.length, "sub-agent")} />
                      ) : null}
                    </Stack>
                    {interactions(ex)}
                    {subAgents.length > 0 ? (
                      <Box
                        component="section"
                        aria-label={`Sub-agents of ${ex.agent_name}`}
                        sx={{ mt: 2 }}
                      >
                        <Typography variant="subtitle2" component="h4" gutterBottom>
                          Sub-agents
                        </Typography>
                        <Stack spacing={1.5} sx={{ pl: { xs: 1, sm: 3 } }}>
                          {subAgents.map((sub) => (
                            <Paper
                              key={sub.execution_id}
                              variant="outlined"
                              component="section"
                              aria-label={`Sub-agent ${sub.agent_name}`}
                              data-execution-id={sub.execution_id}
                              sx={{ p: 1.5, borderLeftWidth: 3, borderLeftColor: "secondary.main" }}
                            >
                              <Stack
                                direction="row"
                                spacing={1}
                                sx={{ alignItems: "center", flexWrap: "wrap", mb: 1 }}
                              >
                                <Typography variant="subtitle2" component="h5">
                                  {sub.agent_name}
                                </Typography>
                                <ToneChip label={plural(interactionsOf(sub), "interaction")} />
                              </Stack>
                              {interactions(sub)}
                            </Paper>
                          ))}
                        </Stack>
                      </Box>
                    ) : null}
                  </Paper>
                );
              })}
            </Stack>
          </Box>
        ))}
        {data && data.session_interactions.length > 0 ? (
          <Box component="section" aria-label="Session interactions">
            <Typography variant="h6" component="h2" gutterBottom>
              Session
            </Typography>
            {data.session_interactions.map(llmItem)}
          </Box>
        ) : null}
      </Stack>
    </Box>
  );
}
