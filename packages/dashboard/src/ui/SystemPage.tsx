import ExpandMore from "@mui/icons-material/ExpandMore";
import {
  Accordion,
  AccordionDetails,
  AccordionSummary,
  Alert,
  Box,
  Chip,
  List,
  ListItem,
  ListItemText,
  Paper,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
} from "@mui/material";
import type { McpServersResponse, SystemConfigResponse } from "@tarsy/contracts";
import type { ReactNode } from "react";
import { isAdminSomewhere } from "../lib/access.ts";
import { ApiError } from "../lib/api.ts";
import { useAccess, useLoad, useServices } from "./context.tsx";
import { formatDuration, formatTime } from "./format.ts";

function Section(props: { title: string; id: string; children: ReactNode }) {
  return (
    <Paper component="section" aria-labelledby={props.id} variant="outlined" sx={{ p: 2 }}>
      <Typography variant="h2" id={props.id} gutterBottom>
        {props.title}
      </Typography>
      {props.children}
    </Paper>
  );
}

/**
 * A table with a header row; rows are the caller's `TableRow`s. The keyboard reaches the table,
 * so the arrow keys scroll one wider than a narrow window (its ring drawn inside the frame,
 * which would clip it).
 */
function DataTable(props: { label: string; head: string[]; children: ReactNode }) {
  return (
    <TableContainer>
      <Table
        size="small"
        aria-label={props.label}
        tabIndex={0}
        sx={{ "&:focus-visible": { outlineOffset: -3 } }}
      >
        <TableHead>
          <TableRow>
            {props.head.map((h) => (
              <TableCell key={h}>{h}</TableCell>
            ))}
          </TableRow>
        </TableHead>
        <TableBody>{props.children}</TableBody>
      </Table>
    </TableContainer>
  );
}

function Health(props: { healthy: boolean | null }) {
  if (props.healthy == null) return <Chip size="small" variant="outlined" label="unknown" />;
  return props.healthy ? (
    <Chip size="small" color="success" variant="outlined" label="healthy" />
  ) : (
    <Chip size="small" color="error" label="unhealthy" />
  );
}

function McpServers(props: { data: McpServersResponse }) {
  return (
    <>
      {props.data.gateway_error ? (
        <Alert severity="error" sx={{ mb: 1 }}>
          Gateway unreachable: {props.data.gateway_error}
        </Alert>
      ) : null}
      <DataTable label="MCP servers" head={["Server", "Transport", "Health", "Tools"]}>
        {props.data.servers.map((s) => (
          <TableRow key={s.id} sx={{ verticalAlign: "top" }}>
            <TableCell>{s.id}</TableCell>
            <TableCell>{s.transport}</TableCell>
            <TableCell>
              {s.enabled ? (
                <Health healthy={s.healthy} />
              ) : (
                <Typography variant="body2">disabled</Typography>
              )}
            </TableCell>
            <TableCell sx={{ width: "55%" }}>
              <Accordion
                disableGutters
                variant="outlined"
                slotProps={{ transition: { unmountOnExit: true } }}
              >
                <AccordionSummary expandIcon={<ExpandMore />}>
                  <Typography variant="body2">
                    {s.tools.length} tools
                    {mutatingCount(s.tools) > 0 ? `, ${mutatingCount(s.tools)} mutating` : ""}
                  </Typography>
                </AccordionSummary>
                <AccordionDetails>
                  <List dense disablePadding>
                    {s.tools.map((t) => (
                      <ListItem key={t.name} disableGutters>
                        <ListItemText
                          primary={
                            <Stack
                              direction="row"
                              spacing={1}
                              component="span"
                              sx={{ alignItems: "center" }}
                            >
                              <code>{t.name}</code>
                              <ToolClassChip tool={t} />
                            </Stack>
                          }
                          secondary={t.description}
                        />
                      </ListItem>
                    ))}
                  </List>
                </AccordionDetails>
              </Accordion>
            </TableCell>
          </TableRow>
        ))}
      </DataTable>
    </>
  );
}

type ToolView = McpServersResponse["servers"][number]["tools"][number];

const mutatingCount = (tools: readonly ToolView[]) => tools.filter((t) => t.mutating).length;

const CLASS_SOURCE: Record<ToolView["mutating_source"], string> = {
  annotations: "from the server's annotations",
  config: "set in mcp_servers.<id>.tools",
  default: "not annotated: counts as mutating",
};

/** A tool's class: mutating tools are offered to action agents only. */
function ToolClassChip(props: { tool: ToolView }) {
  const { tool } = props;
  return (
    <Chip
      size="small"
      variant="outlined"
      color={tool.mutating ? "warning" : "default"}
      label={tool.mutating ? "mutating" : "read-only"}
      title={CLASS_SOURCE[tool.mutating_source]}
    />
  );
}

const orNone = (text: string | null | undefined) => text || "—";

type OrchestratorView = SystemConfigResponse["defaults"]["orchestrator"];

/** An orchestrating agent's guardrails in a line, e.g. "up to 5 at once, 20m 0s each". */
function describeLimits(limits: OrchestratorView): string {
  return [
    `up to ${limits.max_concurrent_agents} at once`,
    limits.agent_timeout_ms === null ? null : `${formatDuration(limits.agent_timeout_ms)} each`,
    limits.max_budget_ms === null ? null : `${formatDuration(limits.max_budget_ms)} in all`,
  ]
    .filter(Boolean)
    .join(", ");
}

type SideModel = SystemConfigResponse["chains"][number]["compose"];

/** `provider (backend)`, then its fallback walk: `mid (langchain) → frontier (langchain)`. */
function describeModel(model: SideModel): string {
  return [model, ...model.fallbacks].map((m) => `${m.llm_provider} (${m.llm_backend})`).join(" → ");
}

/** The resolved configuration, read-only; the API never sends secret values. */
function ConfigViewer(props: { config: SystemConfigResponse }) {
  const { config } = props;
  return (
    <Stack spacing={2}>
      <Typography variant="body2">
        Defaults: provider <strong>{config.defaults.llm_provider}</strong>, alert type{" "}
        <strong>{config.defaults.alert_type}</strong>, up to{" "}
        <strong>{config.defaults.max_iterations}</strong> iterations; an orchestrating agent runs
        sub-agents {describeLimits(config.defaults.orchestrator)}; sessions are labelled from the{" "}
        <strong>{config.defaults.label_map ?? "builtin"}</strong> label map.
      </Typography>
      <Box>
        <Typography variant="h3" gutterBottom>
          Chains
        </Typography>
        <DataTable
          label="Chains"
          head={["Chain", "Alert types", "Stages", "LLM provider", "Chat", "Scoring", "Label map"]}
        >
          {config.chains.map((c) => (
            <TableRow key={c.id} sx={{ verticalAlign: "top" }}>
              <TableCell>
                {c.id}
                {c.builtin ? <Chip size="small" label="built-in" sx={{ ml: 1 }} /> : null}
                {c.description ? (
                  <Typography variant="body2" color="text.secondary">
                    {c.description}
                  </Typography>
                ) : null}
              </TableCell>
              <TableCell>{c.alert_types.join(", ")}</TableCell>
              <TableCell>
                {c.stages.map((s) => (
                  <div key={s.name}>
                    <strong>{s.name}</strong>: {s.agents.join(", ")}
                    {s.replicas > 1 ? ` ×${s.replicas}` : ""}
                    {Object.entries(s.sub_agents).map(([agent, subs]) => (
                      <Typography key={agent} variant="body2" color="text.secondary">
                        {agent} dispatches {subs.join(", ")}
                      </Typography>
                    ))}
                  </div>
                ))}
              </TableCell>
              <TableCell>
                {c.llm_provider}
                <Typography variant="body2" color="text.secondary">
                  executive summary: {describeModel(c.executive_summary)}
                </Typography>
                <Typography variant="body2" color="text.secondary">
                  amended report: {describeModel(c.compose)}
                </Typography>
              </TableCell>
              <TableCell>
                {c.chat_enabled ? "on" : "off"}
                {c.chat_sub_agents.length > 0 ? (
                  <Typography variant="body2" color="text.secondary">
                    dispatches {c.chat_sub_agents.join(", ")}
                  </Typography>
                ) : null}
              </TableCell>
              <TableCell>{c.scoring_enabled ? "on" : "off"}</TableCell>
              <TableCell>{c.label_map ?? "default"}</TableCell>
            </TableRow>
          ))}
        </DataTable>
      </Box>
      <Box>
        <Typography variant="h3" gutterBottom>
          Fallback lists
        </Typography>
        <DataTable label="Fallback lists" head={["List", "Entries, in order"]}>
          {config.fallback_lists.map((list) => (
            <TableRow key={list.name} sx={{ verticalAlign: "top" }}>
              <TableCell>{list.name}</TableCell>
              <TableCell>
                {orNone(
                  list.entries.map((e) => `${e.llm_provider} (${e.llm_backend})`).join(" → "),
                )}
              </TableCell>
            </TableRow>
          ))}
        </DataTable>
        <DataTable label="Fallback selectors" head={["Where", "Selects"]}>
          {config.fallback_selectors.map((selector) => (
            <TableRow key={selector.path}>
              <TableCell>
                <code>{selector.path}</code>
              </TableCell>
              <TableCell>
                {selector.fallback_list ??
                  `${
                    (selector.fallback_providers ?? [])
                      .map((e) => `${e.provider} (${e.backend})`)
                      .join(" → ") || "no fallback"
                  } (deprecated fallback_providers)`}
              </TableCell>
            </TableRow>
          ))}
        </DataTable>
      </Box>
      <Box>
        <Typography variant="h3" gutterBottom>
          Label maps
        </Typography>
        <DataTable label="Label maps" head={["Map", "Labels", "Instructions"]}>
          {config.label_maps.map((m) => (
            <TableRow key={m.name} sx={{ verticalAlign: "top" }}>
              <TableCell>
                {m.name}
                {m.builtin ? <Chip size="small" label="built-in" sx={{ ml: 1 }} /> : null}
                <Typography variant="body2" color="text.secondary">
                  {m.multi ? "several labels per session" : "at most one label per session"}
                </Typography>
              </TableCell>
              <TableCell>
                {m.labels.map((l) => (
                  <div key={l.label}>
                    <strong>{l.label}</strong>
                    <Typography variant="body2" color="text.secondary">
                      {l.description}
                    </Typography>
                  </div>
                ))}
              </TableCell>
              <TableCell sx={{ whiteSpace: "pre-line" }}>{orNone(m.instructions)}</TableCell>
            </TableRow>
          ))}
        </DataTable>
      </Box>
      <Box>
        <Typography variant="h3" gutterBottom>
          Agents
        </Typography>
        <DataTable
          label="Agents"
          head={["Agent", "MCP servers", "Backend", "Max iterations", "Sub-agents"]}
        >
          {config.agents.map((a) => (
            <TableRow key={a.name} sx={{ verticalAlign: "top" }}>
              <TableCell>
                {a.name}
                {a.description ? (
                  <Typography variant="body2" color="text.secondary">
                    {a.description}
                  </Typography>
                ) : null}
              </TableCell>
              <TableCell>{orNone(a.mcp_servers.join(", "))}</TableCell>
              <TableCell>{orNone(a.llm_backend)}</TableCell>
              <TableCell>{a.max_iterations ?? "default"}</TableCell>
              <TableCell>
                {orNone(a.sub_agents.join(", "))}
                {a.sub_agents.length > 0 ? (
                  <Typography variant="body2" color="text.secondary">
                    {describeLimits(a.orchestrator)}
                  </Typography>
                ) : null}
              </TableCell>
            </TableRow>
          ))}
        </DataTable>
      </Box>
      <Box>
        <Typography variant="h3" gutterBottom>
          LLM providers
        </Typography>
        <DataTable
          label="LLM providers"
          head={["Provider", "Type", "Model", "Endpoint", "Key from variable"]}
        >
          {config.llm_providers.map((p) => (
            <TableRow key={p.name}>
              <TableCell>{p.name}</TableCell>
              <TableCell>{p.type}</TableCell>
              <TableCell>{p.model}</TableCell>
              <TableCell>{orNone(p.base_url)}</TableCell>
              <TableCell>
                <code>{orNone(p.api_key_env ?? p.credentials_env)}</code>
              </TableCell>
            </TableRow>
          ))}
        </DataTable>
      </Box>
    </Stack>
  );
}

export function SystemPage() {
  const { api } = useServices();
  const servers = useLoad(() => api.mcpServers(), []);
  const warnings = useLoad(() => api.warnings(), []);
  const access = useAccess();
  // The configuration is for administrators (`admin` of every project): it is asked for only by
  // one who administers some project, and left out when the API refuses them.
  const admin = isAdminSomewhere(access);
  const config = useLoad(() => (admin ? api.systemConfig() : Promise.resolve(null)), [admin]);
  const refused = config.error instanceof ApiError && config.error.status === 403;
  return (
    <Stack spacing={2} component="section">
      <Typography variant="h1">System</Typography>
      <Section title="MCP servers" id="mcp-h">
        {servers.error ? <Alert severity="error">{servers.error.message}</Alert> : null}
        {servers.data ? <McpServers data={servers.data} /> : null}
      </Section>
      <Section title="Warnings" id="warnings-h">
        {warnings.data?.warnings.length === 0 ? (
          <Typography color="text.secondary">No warnings.</Typography>
        ) : null}
        <Stack spacing={1}>
          {warnings.data?.warnings.map((w) => (
            <Alert key={w.id} severity="warning">
              <strong>{w.category}</strong> {w.server_id ?? ""}: {w.message}{" "}
              <Typography component="span" variant="body2" color="text.secondary">
                {formatTime(w.created_at)}
              </Typography>
            </Alert>
          ))}
        </Stack>
      </Section>
      {admin && !refused ? (
        <Section title="Configuration" id="config-h">
          {config.error ? <Alert severity="error">{config.error.message}</Alert> : null}
          {config.data ? <ConfigViewer config={config.data} /> : null}
        </Section>
      ) : null}
    </Stack>
  );
}
