import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Card from "@mui/material/Card";
import CardContent from "@mui/material/CardContent";
import CardHeader from "@mui/material/CardHeader";
import Stack from "@mui/material/Stack";
import Tab from "@mui/material/Tab";
import Tabs from "@mui/material/Tabs";
import Typography from "@mui/material/Typography";
import type { SessionDetail } from "@tarsy/contracts";
import { forwardRef, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { type ItemProps, type ListProps, Virtuoso, type VirtuosoHandle } from "react-virtuoso";
import {
  dispatchedExecutionId,
  groupByExecution,
  subAgentParents,
  type TimelineItem,
} from "../lib/timeline.ts";
import { StatusChip, ToneChip } from "./StatusChip.tsx";
import { SubAgentCard } from "./SubAgentCard.tsx";
import { Entry, ExpandedContext, type ExpandedState } from "./TimelineEntry.tsx";

type Stage = SessionDetail["stages"][number];
type Execution = Stage["executions"][number];

/** The provider an execution runs on, and the one it started with when it fell back. */
export function ExecutionProvider(props: { execution: Execution | undefined }) {
  const e = props.execution;
  if (!e?.llm_provider) return null;
  return (
    <Stack
      direction="row"
      spacing={1}
      role="note"
      aria-label="LLM provider"
      data-execution-id={e.id}
      sx={{ alignItems: "center", flexWrap: "wrap" }}
    >
      <Typography variant="body2" color="text.secondary">
        LLM: <code>{e.llm_provider}</code>
        {e.llm_backend ? ` (${e.llm_backend})` : ""}
      </Typography>
      {e.original_llm_provider ? (
        <ToneChip
          tone="warning"
          title="switched after the provider kept failing"
          label={`fell back from ${e.original_llm_provider}${
            e.original_llm_backend ? ` (${e.original_llm_backend})` : ""
          }`}
        />
      ) : null}
    </Stack>
  );
}

/** A plain list of entries (chat answers, the synthesis card): short, not virtualised. */
export function EntryList(props: {
  items: TimelineItem[];
  label: string;
  /**
   * The executions the items belong to (a chat turn's): sub-agents among them are shown as
   * cards, each after the dispatch_agent call that started it, never as loose items.
   */
  executions?: readonly Execution[];
}) {
  const expanded = useExpandedState();
  const { items, executions } = props;
  const entries = useMemo(() => {
    const parents = subAgentParents(executions ?? [], items);
    const isSub = (i: TimelineItem) => i.execution_id !== null && parents.has(i.execution_id);
    const subItems = groupByExecution(items.filter(isSub));
    const ids = new Set([
      ...(executions ?? []).filter((e) => parents.has(e.id)).map((e) => e.id),
      ...subItems.keys(),
    ]);
    const subs = [...ids].map(
      (id) =>
        executions?.find((e) => e.id === id) ??
        stub(id, { agent_name: "Sub-agent", parent_execution_id: parents.get(id) ?? null }),
    );
    const out: ({ kind: "item"; item: TimelineItem } | { kind: "sub"; sub: Execution })[] = [];
    const placed = new Set<string>();
    for (const item of items.filter((i) => !isSub(i))) {
      out.push({ kind: "item", item });
      const sub = subs.find((s) => s.id === dispatchedExecutionId(item));
      if (sub && !placed.has(sub.id)) {
        placed.add(sub.id);
        out.push({ kind: "sub", sub });
      }
    }
    for (const sub of subs) if (!placed.has(sub.id)) out.push({ kind: "sub", sub });
    return { out, subItems };
  }, [items, executions]);
  return (
    <ExpandedContext.Provider value={expanded}>
      <Box component="ol" aria-label={props.label} sx={{ listStyle: "none", m: 0, p: 0 }}>
        {entries.out.map((entry) =>
          entry.kind === "item" ? (
            <li key={entry.item.event_id}>
              <Entry item={entry.item} />
            </li>
          ) : (
            <li key={`x:${entry.sub.id}`}>
              <SubAgentCard
                execution={entry.sub}
                items={entries.subItems.get(entry.sub.id) ?? []}
                highlighted={null}
              />
            </li>
          ),
        )}
      </Box>
    </ExpandedContext.Provider>
  );
}

/** Which collapsible parts (sub-agent cards) are open. */
function useExpandedState(): ExpandedState {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  return useMemo(
    () => ({
      isOpen: (key: string) => open.has(key),
      toggle: (key: string, next: boolean) =>
        setOpen((prev) => {
          const copy = new Set(prev);
          if (next) copy.add(key);
          else copy.delete(key);
          return copy;
        }),
    }),
    [open],
  );
}

/** One row of the virtualised timeline. */
type Row =
  | { kind: "stage"; key: string; stage: Stage; execution: Execution | undefined }
  | { kind: "agents"; key: string; stage: Stage; executions: Execution[]; selected: string }
  | { kind: "item"; key: string; item: TimelineItem }
  | { kind: "subagent"; key: string; execution: Execution; items: TimelineItem[] }
  | { kind: "synthesis"; key: string; stage: Stage; items: TimelineItem[] }
  | { kind: "session"; key: string };

/**
 * The stage's own agents shown as tabs (never its sub-agents), in agent order: when it has
 * several, or when events name several executions the page does not know yet.
 */
function parallelExecutions(agents: Execution[], groups: Map<string, TimelineItem[]>): Execution[] {
  const known = [...agents].sort((a, b) => a.agent_index - b.agent_index);
  if (known.length > 1) return known;
  return groups.size > 1
    ? [...groups.keys()].map((k) => known.find((e) => e.id === k) ?? stub(k))
    : [];
}
const stub = (id: string, extra: Partial<Execution> = {}): Execution =>
  ({ id, agent_name: id, status: "active", ...extra }) as unknown as Execution;

/**
 * A stage's sub-agents in dispatch order: those the session detail lists (it orders them so),
 * then any only their events name yet (the list is refetched meanwhile).
 */
function subAgentsOf(
  stage: Stage,
  parents: ReadonlyMap<string, string>,
  subItems: Map<string, TimelineItem[]>,
): Execution[] {
  const known = stage.executions.filter((e) => parents.has(e.id));
  const unknown = [...subItems.keys()]
    .filter((id) => !known.some((e) => e.id === id))
    .map((id) => {
      const task = subItems.get(id)?.find((i) => i.event_type === "task_assigned");
      return stub(id, {
        agent_name: "Sub-agent",
        parent_execution_id: parents.get(id) ?? null,
        task: task?.content ?? null,
        error_message: null,
        started_at: null,
        completed_at: null,
      });
    });
  return [...known, ...unknown];
}

function buildRows(
  stages: Stage[],
  items: TimelineItem[],
  tabs: ReadonlyMap<string, string>,
  parents: ReadonlyMap<string, string>,
): Row[] {
  const rows: Row[] = [];
  const staged = new Set(stages.map((s) => s.id));
  const isSub = (i: TimelineItem) => i.execution_id !== null && parents.has(i.execution_id);
  for (const stage of stages) {
    const own = items.filter((i) => i.stage_id === stage.id);
    if (own.length === 0 && stage.status === "pending") continue;
    // Single-call document stages: a synthesis, and the amended report after an action stage.
    if (stage.kind === "synthesis" || stage.kind === "compose") {
      rows.push({ kind: "synthesis", key: `s:${stage.id}`, stage, items: own });
      continue;
    }
    const subItems = groupByExecution(own.filter(isSub));
    const agentItems = own.filter((i) => !isSub(i));
    const groups = groupByExecution(agentItems);
    const agents = stage.executions.filter((e) => !parents.has(e.id));
    const subs = subAgentsOf(stage, parents, subItems);
    const subRow = (sub: Execution): Row => ({
      kind: "subagent",
      key: `x:${sub.id}`,
      execution: sub,
      items: subItems.get(sub.id) ?? [],
    });
    // The parent's items, each sub-agent card after the dispatch_agent call that started it;
    // the ones no call names (yet) after the parent's items, in dispatch order.
    const place = (list: TimelineItem[], shown: (parentId: string | undefined) => boolean) => {
      const placed = new Set<string>();
      for (const item of list) {
        rows.push({ kind: "item", key: item.event_id, item });
        const id = dispatchedExecutionId(item);
        const sub = id ? subs.find((s) => s.id === id) : undefined;
        if (sub && !placed.has(sub.id) && parents.get(sub.id) === item.execution_id) {
          placed.add(sub.id);
          rows.push(subRow(sub));
        }
      }
      for (const sub of subs)
        if (!placed.has(sub.id) && shown(parents.get(sub.id))) rows.push(subRow(sub));
    };
    const parallel = parallelExecutions(agents, groups);
    if (parallel.length === 0) {
      const execution = agents.find((e) => groups.has(e.id)) ?? agents[0];
      rows.push({ kind: "stage", key: `s:${stage.id}`, stage, execution });
      place(agentItems, () => true);
      continue;
    }
    const wanted = tabs.get(stage.id);
    const selected = parallel.some((e) => e.id === wanted)
      ? (wanted ?? "")
      : (parallel[0]?.id ?? "");
    rows.push({ kind: "stage", key: `s:${stage.id}`, stage, execution: undefined });
    rows.push({ kind: "agents", key: `a:${stage.id}`, stage, executions: parallel, selected });
    place(groups.get(selected) ?? [], (parentId) => parentId === selected);
  }
  const unstaged = items.filter((i) => !i.stage_id || !staged.has(i.stage_id));
  if (unstaged.length > 0) {
    rows.push({ kind: "session", key: "session" });
    for (const item of unstaged) rows.push({ kind: "item", key: item.event_id, item });
  }
  return rows;
}

/** An action stage: the "Action" mark, and whether its agents acted (once it ended). */
function ActionChips(props: { stage: Stage }) {
  const { stage } = props;
  const acted = stage.actions_executed;
  return (
    <>
      <ToneChip label="Action" tone="info" title="an action stage: its agents may act on systems" />
      {acted === true ? (
        <ToneChip label="Acted" tone="warning" title="the agents said they executed actions" />
      ) : acted === false ? (
        <ToneChip label="No action taken" title="the agents said they did not act" />
      ) : stage.status === "completed" ? (
        <ToneChip label="Actions unknown" title="the agents did not say whether they acted" />
      ) : null}
    </>
  );
}

function StageHeader(props: { stage: Stage; execution: Execution | undefined }) {
  const { stage } = props;
  return (
    <Box sx={{ pt: 3, pb: 1 }}>
      <Stack direction="row" spacing={1} sx={{ alignItems: "center" }}>
        <Typography variant="h6" component="h3">
          {stage.stage_index}. {stage.stage_name}
        </Typography>
        <StatusChip status={stage.status} />
        {stage.kind === "action" ? <ActionChips stage={stage} /> : null}
      </Stack>
      {stage.error_message ? (
        <Alert severity="error" sx={{ mt: 1 }}>
          {stage.error_message}
        </Alert>
      ) : null}
      <ExecutionProvider execution={props.execution} />
    </Box>
  );
}

function AgentTabs(props: {
  row: Extract<Row, { kind: "agents" }>;
  onSelect: (stageId: string, executionId: string) => void;
}) {
  const { row } = props;
  const selected = row.executions.find((e) => e.id === row.selected);
  return (
    <Box sx={{ borderBottom: 1, borderColor: "divider", mb: 1, bgcolor: "background.paper" }}>
      <Tabs
        value={row.selected}
        onChange={(_, id: string) => props.onSelect(row.stage.id, id)}
        aria-label="Parallel agents"
        variant="scrollable"
        scrollButtons="auto"
      >
        {row.executions.map((e) => (
          <Tab
            key={e.id}
            value={e.id}
            sx={{ textTransform: "none" }}
            label={
              <Stack direction="row" spacing={1} sx={{ alignItems: "center" }}>
                <span>{e.agent_name}</span>
                <StatusChip status={e.status} />
              </Stack>
            }
          />
        ))}
      </Tabs>
      <Box sx={{ py: 1 }}>
        <ExecutionProvider execution={selected} />
        {selected?.error_message ? <Alert severity="error">{selected.error_message}</Alert> : null}
      </Box>
    </Box>
  );
}

/** What a single-call document stage is called on its card. */
const DOCUMENT_STAGE_LABELS = {
  synthesis: { chip: "synthesis", region: "Synthesis" },
  compose: { chip: "amended report", region: "Amended report" },
} as const;

function SynthesisCard(props: { stage: Stage; items: TimelineItem[]; highlighted: string | null }) {
  const { stage } = props;
  const label = DOCUMENT_STAGE_LABELS[stage.kind === "compose" ? "compose" : "synthesis"];
  return (
    <Card
      variant="outlined"
      component="section"
      aria-label={`${label.region} ${stage.stage_name}`}
      sx={{ mt: 3 }}
    >
      <CardHeader
        title={
          <Stack direction="row" spacing={1} sx={{ alignItems: "center" }}>
            <Typography variant="h6" component="h3">
              {stage.stage_index}. {stage.stage_name}
            </Typography>
            <ToneChip label={label.chip} />
            <StatusChip status={stage.status} />
          </Stack>
        }
        subheader={<ExecutionProvider execution={stage.executions[0]} />}
        disableTypography
      />
      <CardContent sx={{ pt: 0 }}>
        {stage.error_message ? <Alert severity="error">{stage.error_message}</Alert> : null}
        <Box
          component="ol"
          aria-label={`${stage.stage_name} timeline`}
          sx={{ listStyle: "none", m: 0, p: 0 }}
        >
          {props.items.map((item) => (
            <li key={item.event_id}>
              <Entry item={item} highlighted={item.event_id === props.highlighted} />
            </li>
          ))}
        </Box>
      </CardContent>
    </Card>
  );
}

const List = forwardRef<HTMLOListElement, ListProps>(function List(props, ref) {
  const { style, children } = props;
  return (
    <ol
      ref={ref}
      aria-label="Timeline events"
      style={{ ...style, listStyle: "none", margin: 0, padding: 0 }}
    >
      {children}
    </ol>
  );
});
function Item(props: ItemProps<Row>) {
  const { item: _row, children, ...rest } = props;
  return <li {...rest}>{children}</li>;
}

/** The item a `#event-<id>` hash names, or null. */
function hashTarget(): string | null {
  const m = /^#event-(.+)$/.exec(window.location.hash);
  return m?.[1] ? decodeURIComponent(m[1]) : null;
}

/**
 * The session's timeline, virtualised (react-virtuoso over the window's scroll): stage
 * headers, parallel agents as tabs, each sub-agent as a card in its parent's flow (after the
 * dispatch_agent call that started it), the synthesis as a card, session-level events last. Follows
 * the output while the user is at the bottom; opens at `#event-<id>` (selecting the agent tab
 * that holds it) and highlights that item.
 */
export function SessionTimeline(props: { stages: Stage[]; items: TimelineItem[]; live: boolean }) {
  const [tabs, setTabs] = useState<ReadonlyMap<string, string>>(new Map());
  const expanded = useExpandedState();
  const [highlighted, setHighlighted] = useState<string | null>(null);
  const [hash, setHash] = useState(hashTarget);
  const virtuoso = useRef<VirtuosoHandle>(null);
  const parents = useMemo(
    () =>
      subAgentParents(
        props.stages.flatMap((s) => s.executions),
        props.items,
      ),
    [props.stages, props.items],
  );
  const rows = useMemo(
    () => buildRows(props.stages, props.items, tabs, parents),
    [props.stages, props.items, tabs, parents],
  );

  const selectTab = useCallback(
    (stageId: string, executionId: string) =>
      setTabs((prev) => new Map(prev).set(stageId, executionId)),
    [],
  );

  useEffect(() => {
    const onHash = () => setHash(hashTarget());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  // A deep link: select the tab holding the item (a sub-agent's: its parent's tab, its card
  // opened), then scroll the virtualiser to its row.
  const handled = useRef<string | null>(null);
  useEffect(() => {
    if (!hash || handled.current === hash) return;
    const item = props.items.find((i) => i.event_id === hash);
    if (!item) return;
    const stage = props.stages.find((s) => s.id === item.stage_id);
    const sub = item.execution_id && parents.has(item.execution_id) ? item.execution_id : null;
    const agent = sub ? parents.get(sub) : item.execution_id;
    if (stage && agent && tabs.get(stage.id) !== agent) {
      const holder = rows.find((r) => r.kind === "agents" && r.stage.id === stage.id);
      if (holder?.kind === "agents" && holder.selected !== agent) {
        selectTab(stage.id, agent);
        return; // the rows are rebuilt; this runs again
      }
    }
    if (sub && !expanded.isOpen(`subagent:${sub}`)) {
      expanded.toggle(`subagent:${sub}`, true);
      return; // opened on the next render; this runs again
    }
    const index = rows.findIndex(
      (r) =>
        (r.kind === "item" && r.item.event_id === hash) ||
        ((r.kind === "synthesis" || r.kind === "subagent") &&
          r.items.some((i) => i.event_id === hash)),
    );
    if (index < 0) return;
    handled.current = hash;
    setHighlighted(hash);
    virtuoso.current?.scrollToIndex({ index, align: "center" });
    // Rows above may measure taller once rendered: settle on the item again.
    const again = setTimeout(() => {
      virtuoso.current?.scrollToIndex({ index, align: "center" });
      document.getElementById(`event-${hash}`)?.focus({ preventScroll: true });
    }, 300);
    const fade = setTimeout(() => setHighlighted(null), 4000);
    return () => {
      clearTimeout(again);
      clearTimeout(fade);
    };
  }, [hash, rows, props.items, props.stages, tabs, selectTab, parents, expanded]);

  return (
    <ExpandedContext.Provider value={expanded}>
      <Virtuoso
        ref={virtuoso}
        useWindowScroll
        data={rows}
        computeItemKey={(_, row) => row.key}
        increaseViewportBy={{ top: 400, bottom: 800 }}
        followOutput={props.live ? (atBottom) => (atBottom ? "auto" : false) : false}
        initialTopMostItemIndex={0}
        components={{ List, Item }}
        itemContent={(_, row) => {
          switch (row.kind) {
            case "stage":
              return <StageHeader stage={row.stage} execution={row.execution} />;
            case "agents":
              return <AgentTabs row={row} onSelect={selectTab} />;
            case "synthesis":
              return (
                <SynthesisCard stage={row.stage} items={row.items} highlighted={highlighted} />
              );
            case "session":
              return (
                <Typography variant="h6" component="h3" sx={{ pt: 3, pb: 1 }}>
                  Session
                </Typography>
              );
            case "item":
              return <Entry item={row.item} highlighted={row.item.event_id === highlighted} />;
            case "subagent":
              return (
                <SubAgentCard
                  execution={row.execution}
                  items={row.items}
                  highlighted={highlighted}
                />
              );
            default: {
              const unreachable: never = row;
              throw new Error(`unknown row ${JSON.stringify(unreachable)}`);
            }
          }
        }}
      />
    </ExpandedContext.Provider>
  );
}
