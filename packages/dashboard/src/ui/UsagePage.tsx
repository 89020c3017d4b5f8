import {
  Alert,
  Box,
  Button,
  Chip,
  LinearProgress,
  Link as MuiLink,
  Paper,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  ToggleButton,
  ToggleButtonGroup,
  Typography,
} from "@mui/material";
import { BarChart } from "@mui/x-charts/BarChart";
import { LineChart } from "@mui/x-charts/LineChart";
import type { UsageSeriesResponse, UsageSummaryResponse, UsageTotals } from "@tarsy/contracts";
import type { ReactNode } from "react";
import { Link as RouterLink } from "react-router";
import {
  DEFAULT_USAGE_STATE,
  formatUsageState,
  parseUsageState,
  USAGE_RANGES,
  type UsageRange,
  type UsageRankBy,
  type UsageState,
} from "../lib/usage-state.ts";
import { useLoad, useServices } from "./context.tsx";
import { NATIVE_SELECT } from "./fields.ts";
import { formatTime } from "./format.ts";
import { navigate } from "./router.tsx";
import { StatusChip } from "./StatusChip.tsx";

const usd = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});
const count = new Intl.NumberFormat("en-US");
export const formatUsd = (n: number) => usd.format(n);
export const formatCount = (n: number) => count.format(n);

const RANGES = Object.keys(USAGE_RANGES) as UsageRange[];
const DAY_MS = 86_400_000;

/** What a group's cost figure stands for: all, some or none of its interactions priced. */
function Completeness(props: { totals: UsageTotals }) {
  const { cost_completeness: c, unpriced_interactions: n } = props.totals;
  const label = c === "complete" ? "all priced" : c === "partial" ? `${n} unpriced` : "not priced";
  return (
    <Chip
      size="small"
      variant="outlined"
      color={c === "complete" ? "success" : c === "partial" ? "warning" : "default"}
      label={label}
      data-completeness={c}
    />
  );
}

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

function Filters(props: {
  state: UsageState;
  alertTypes: readonly string[];
  chains: readonly string[];
  update: (patch: Partial<UsageState>) => void;
}) {
  const { state, update } = props;
  return (
    <Paper
      component="form"
      variant="outlined"
      aria-label="Filter usage"
      onSubmit={(e) => e.preventDefault()}
      sx={{ p: 2, mb: 2 }}
    >
      <Stack direction="row" spacing={2} useFlexGap sx={{ flexWrap: "wrap", alignItems: "center" }}>
        <ToggleButtonGroup
          size="small"
          exclusive
          value={state.range}
          onChange={(_, v: UsageRange | null) => v && update({ range: v })}
          aria-label="Time range"
          sx={{ "& .MuiToggleButton-root": { textTransform: "none", px: 1.5 } }}
        >
          {RANGES.map((r) => (
            <ToggleButton key={r} value={r} aria-label={`Last ${r}`}>
              {r}
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
        {(
          [
            { key: "alert_type", label: "Alert type", values: props.alertTypes },
            { key: "chain_id", label: "Chain", values: props.chains },
          ] as const
        ).map((f) => (
          <TextField
            key={f.key}
            id={`usage-${f.key}`}
            select
            size="small"
            label={f.label}
            value={state[f.key]}
            onChange={(e) => update({ [f.key]: e.target.value })}
            slotProps={NATIVE_SELECT}
            sx={{ minWidth: 180 }}
          >
            <option value="">All</option>
            {f.values.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </TextField>
        ))}
        <ToggleButtonGroup
          size="small"
          exclusive
          value={state.rank_by}
          onChange={(_, v: UsageRankBy | null) => v && update({ rank_by: v })}
          aria-label="Rank by"
          sx={{ "& .MuiToggleButton-root": { textTransform: "none", px: 1.5 } }}
        >
          <ToggleButton value="cost" aria-label="Rank by cost">
            By cost
          </ToggleButton>
          <ToggleButton value="tokens" aria-label="Rank by tokens">
            By tokens
          </ToggleButton>
        </ToggleButtonGroup>
      </Stack>
    </Paper>
  );
}

function Figure(props: { label: string; value: string; testId: string; children?: ReactNode }) {
  return (
    <Paper variant="outlined" sx={{ p: 2, flex: "1 1 180px" }}>
      <Typography variant="body2" color="text.secondary" id={`${props.testId}-label`}>
        {props.label}
      </Typography>
      <Typography
        variant="h2"
        component="p"
        data-testid={props.testId}
        aria-describedby={`${props.testId}-label`}
        sx={{ fontSize: "1.6rem", my: 0.5 }}
      >
        {props.value}
      </Typography>
      {props.children}
    </Paper>
  );
}

function Headline(props: { totals: UsageTotals }) {
  const t = props.totals;
  return (
    <Stack
      direction="row"
      spacing={2}
      useFlexGap
      sx={{ flexWrap: "wrap", mb: 2 }}
      component="section"
      aria-label="Totals"
    >
      <Figure label="Estimated cost" value={formatUsd(t.estimated_cost_usd)} testId="usage-cost">
        <Completeness totals={t} />
      </Figure>
      <Figure label="Tokens" value={formatCount(t.total_tokens)} testId="usage-tokens">
        <Typography variant="body2" color="text.secondary">
          {formatCount(t.input_tokens)} in · {formatCount(t.output_tokens)} out
          {t.thinking_tokens ? ` · ${formatCount(t.thinking_tokens)} thinking` : ""}
          {t.cache_read_tokens ? ` · ${formatCount(t.cache_read_tokens)} cache read` : ""}
          {t.cache_creation_tokens ? ` · ${formatCount(t.cache_creation_tokens)} cache write` : ""}
        </Typography>
      </Figure>
      <Figure label="Sessions" value={formatCount(t.sessions)} testId="usage-sessions" />
      <Figure
        label="LLM interactions"
        value={formatCount(t.llm_interactions)}
        testId="usage-interactions"
      />
      <Figure
        label="Unpriced interactions"
        value={formatCount(t.unpriced_interactions)}
        testId="usage-unpriced"
      />
    </Stack>
  );
}

/** Every UTC day of the window, the days without usage as zeros. */
function everyDay(body: UsageSummaryResponse) {
  const byDate = new Map(body.by_day.map((d) => [d.date, d]));
  const days: { date: string; cost: number; input: number; output: number; thinking: number }[] =
    [];
  const start = Date.parse(`${body.start_date.slice(0, 10)}T00:00:00Z`);
  const end = Date.parse(body.end_date);
  for (let t = start; t < end && days.length < 400; t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    const d = byDate.get(date);
    days.push({
      date,
      cost: d?.estimated_cost_usd ?? 0,
      input: d?.input_tokens ?? 0,
      output: d?.output_tokens ?? 0,
      thinking: d?.thinking_tokens ?? 0,
    });
  }
  return days;
}

const CHART_HEIGHT = 260;

/**
 * A chart in a labelled figure. The chart is one tab stop whose arrow keys walk its bars (their
 * values announced); its focus ring is drawn here, as the chart draws none.
 */
function ChartFigure(props: { label: string; testId?: string; children: ReactNode }) {
  return (
    <Box
      component="figure"
      aria-label={props.label}
      data-testid={props.testId}
      sx={{
        m: 0,
        "& [tabindex]:focus-visible": {
          outline: "2px solid !important",
          outlineColor: "var(--mui-palette-primary-main) !important",
          outlineOffset: "-2px",
        },
      }}
    >
      {props.children}
    </Box>
  );
}

function OverTime(props: { body: UsageSummaryResponse }) {
  const days = everyDay(props.body);
  const dates = days.map((d) => d.date.slice(5));
  const tokens = (n: number | null) => (n == null ? "" : formatCount(n));
  return (
    <Stack direction={{ xs: "column", lg: "row" }} spacing={2} sx={{ mb: 2 }}>
      <Box sx={{ flex: 1, minWidth: 0 }}>
        <Section title="Cost per day" id="usage-cost-per-day">
          <ChartFigure label="Estimated cost per UTC day" testId="chart-cost-per-day">
            <BarChart
              height={CHART_HEIGHT}
              xAxis={[{ scaleType: "band", data: dates }]}
              yAxis={[{ valueFormatter: (v: number) => formatUsd(v), width: 70 }]}
              series={[
                {
                  data: days.map((d) => d.cost),
                  label: "Estimated cost (USD)",
                  valueFormatter: (v) => (v == null ? "" : formatUsd(v)),
                },
              ]}
              hideLegend
            />
          </ChartFigure>
        </Section>
      </Box>
      <Box sx={{ flex: 1, minWidth: 0 }}>
        <Section title="Tokens per day" id="usage-tokens-per-day">
          <ChartFigure label="Tokens per UTC day" testId="chart-tokens-per-day">
            <BarChart
              height={CHART_HEIGHT}
              xAxis={[{ scaleType: "band", data: dates }]}
              yAxis={[{ valueFormatter: (v: number) => formatCount(v), width: 70 }]}
              series={[
                {
                  data: days.map((d) => d.input),
                  label: "Input",
                  stack: "t",
                  valueFormatter: tokens,
                },
                {
                  data: days.map((d) => d.output),
                  label: "Output",
                  stack: "t",
                  valueFormatter: tokens,
                },
                {
                  data: days.map((d) => d.thinking),
                  label: "Thinking",
                  stack: "t",
                  valueFormatter: tokens,
                },
              ]}
            />
          </ChartFigure>
        </Section>
      </Box>
    </Stack>
  );
}

type Series = Extract<UsageSeriesResponse, { cost_estimation_enabled: true }>;

/** Fixed colors (both themes) in the series' stack order, and one for the other models. */
const MODEL_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1"];
const OTHER_COLOR = "#9d9d9d";
const AVERAGE_COLOR = "#4e79a7";
const SINGLE_SESSION_COLOR = "#a5bdd8";

const plural = (n: number, one: string) => `${formatCount(n)} ${one}${n === 1 ? "" : "s"}`;

/**
 * The series' two charts: cumulative estimated cost stacked by model, and the average cost per
 * session of each day (no column for a day without sessions; a lighter one for a single
 * session). Each figure has a summary as its label, and the daily figures are a table below.
 */
function CostOverTime(props: { series: Series }) {
  const { series } = props;
  const points = series.points;
  const dates = points.map((p) => p.date);
  const other = points.map((p) =>
    (p.other_models ?? []).reduce((n, m) => n + m.estimated_cost_usd, 0),
  );
  const hasOther = other.some((v) => v > 0);
  const cumulative = (daily: number[]) => {
    let sum = 0;
    return daily.map((v) => {
      sum += v;
      return sum;
    });
  };
  const bands = [
    ...series.models.map((model, i) => ({
      label: model,
      color: MODEL_COLORS[i % MODEL_COLORS.length] ?? OTHER_COLOR,
      daily: points.map((p) => p.by_model[model] ?? 0),
      detail: (_: number) => "",
    })),
    ...(hasOther
      ? [
          {
            label: "Other models",
            color: OTHER_COLOR,
            daily: other,
            detail: (i: number) =>
              (points[i]?.other_models ?? [])
                .map((m) => `${m.model_name} ${formatUsd(m.estimated_cost_usd)}`)
                .join(", "),
          },
        ]
      : []),
  ];
  const total = points.reduce((n, p) => n + p.estimated_cost_usd, 0);
  const sessions = points.reduce((n, p) => n + p.session_count, 0);
  const withSessions = points.filter((p) => p.session_count > 0);
  const dayTick = (v: string, ctx: { location: string }) =>
    ctx.location === "tick" ? v.slice(5) : `${v} (${series.timezone})`;
  if (sessions === 0) {
    return (
      <Section title="Cost over time" id="usage-cost-over-time">
        <Typography color="text.secondary">No data in this window.</Typography>
      </Section>
    );
  }
  const costLabel =
    `Estimated cumulative cost by model over ${plural(points.length, "day")} ` +
    `(${series.timezone}): ${formatUsd(total)} in all` +
    (bands.length
      ? `; ${bands.map((b) => `${b.label} ${formatUsd(b.daily.reduce((n, v) => n + v, 0))}`).join(", ")}`
      : "");
  const averages = withSessions.map((p) => p.average_cost_usd ?? 0);
  const averageLabel =
    `Average estimated cost per session on the ${plural(withSessions.length, "day")} with ` +
    `sessions: from ${formatUsd(Math.min(...averages))} to ${formatUsd(Math.max(...averages))}`;
  return (
    <Section title="Cost over time" id="usage-cost-over-time">
      {series.cost_completeness !== "complete" ? (
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          Est. cost leaves out {plural(series.unpriced_interaction_count, "unpriced interaction")} (
          {formatCount(series.unpriced_token_count)} tokens).
        </Typography>
      ) : null}
      <Stack direction={{ xs: "column", lg: "row" }} spacing={2}>
        <Box sx={{ flex: 1, minWidth: 0 }}>
          <Typography variant="h3" component="h3" sx={{ fontSize: "1rem", fontWeight: 600 }}>
            Est. cumulative cost by model
          </Typography>
          <ChartFigure label={costLabel} testId="chart-cumulative-cost">
            <LineChart
              height={CHART_HEIGHT}
              xAxis={[{ scaleType: "point", data: dates, valueFormatter: dayTick }]}
              yAxis={[{ valueFormatter: (v: number) => formatUsd(v), width: 70, min: 0 }]}
              series={bands.map((b) => {
                const sums = cumulative(b.daily);
                return {
                  id: b.label,
                  label: b.label,
                  color: b.color,
                  data: sums,
                  area: true,
                  stack: "cost",
                  showMark: false,
                  valueFormatter: (v: number | null, { dataIndex }: { dataIndex: number }) => {
                    if (v == null) return "";
                    const day = b.daily[dataIndex] ?? 0;
                    const detail = day > 0 ? b.detail(dataIndex) : "";
                    return `${formatUsd(v)} (+${formatUsd(day)} that day${detail ? `: ${detail}` : ""})`;
                  },
                };
              })}
            />
          </ChartFigure>
        </Box>
        <Box sx={{ flex: 1, minWidth: 0 }}>
          <Typography variant="h3" component="h3" sx={{ fontSize: "1rem", fontWeight: 600 }}>
            Est. average cost per session
          </Typography>
          <ChartFigure label={averageLabel} testId="chart-average-cost">
            <BarChart
              height={CHART_HEIGHT}
              xAxis={[{ scaleType: "band", data: dates, valueFormatter: dayTick }]}
              yAxis={[{ valueFormatter: (v: number) => formatUsd(v), width: 70, min: 0 }]}
              series={[
                {
                  label: "Est. average cost per session",
                  data: points.map((p) => (p.session_count > 0 ? (p.average_cost_usd ?? 0) : null)),
                  color: AVERAGE_COLOR,
                  colorGetter: ({ dataIndex }) =>
                    points[dataIndex]?.session_count === 1 ? SINGLE_SESSION_COLOR : AVERAGE_COLOR,
                  valueFormatter: (v, { dataIndex }) => {
                    const n = points[dataIndex]?.session_count ?? 0;
                    if (v == null || n === 0) return "no sessions";
                    return n === 1
                      ? `${formatUsd(v)} (1 session: its cost)`
                      : `${formatUsd(v)} (${plural(n, "session")})`;
                  },
                },
              ]}
              hideLegend
            />
          </ChartFigure>
          <Typography variant="body2" color="text.secondary">
            No column: a day without sessions. A lighter column: a day of one session (its cost).
          </Typography>
        </Box>
      </Stack>
      <Box component="details" sx={{ mt: 1 }}>
        <Box component="summary" sx={{ cursor: "pointer" }}>
          Daily figures
        </Box>
        <TableContainer>
          <Table size="small" aria-label="Daily estimated cost">
            <TableHead>
              <TableRow>
                <TableCell>Day ({series.timezone})</TableCell>
                <TableCell align="right">Sessions</TableCell>
                <TableCell align="right">Est. cost</TableCell>
                <TableCell align="right">Est. cost / session</TableCell>
                <TableCell align="right">Cumulative</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {cumulative(points.map((p) => p.estimated_cost_usd)).map((sum, i) => {
                const p = points[i];
                if (!p) return null;
                return (
                  <TableRow key={p.date} data-date={p.date}>
                    <TableCell component="th" scope="row">
                      {p.date}
                    </TableCell>
                    <TableCell align="right">{formatCount(p.session_count)}</TableCell>
                    <TableCell align="right">{formatUsd(p.estimated_cost_usd)}</TableCell>
                    <TableCell align="right">
                      {p.average_cost_usd == null ? "—" : formatUsd(p.average_cost_usd)}
                    </TableCell>
                    <TableCell align="right">{formatUsd(sum)}</TableCell>
                  </TableRow>
                );
              })}
            </TableBody>
          </Table>
        </TableContainer>
      </Box>
    </Section>
  );
}

/** The series' region: loads on its own, so a failure leaves the rest of the page up. */
function SeriesRegion(props: {
  load: { data: { key: string; body: UsageSeriesResponse } | null; error: Error | null };
  retry: () => void;
}) {
  const { data, error } = props.load;
  if (error) {
    return (
      <Alert
        severity="error"
        sx={{ mb: 2 }}
        action={
          <Button color="inherit" size="small" onClick={props.retry}>
            Retry
          </Button>
        }
      >
        Could not load the cost over time: {error.message}
      </Alert>
    );
  }
  if (!data) return <LinearProgress aria-label="Loading cost over time" sx={{ mb: 2 }} />;
  if (!data.body.cost_estimation_enabled) return null;
  return (
    <Box sx={{ mb: 2 }} data-testid="usage-series-loaded" data-query={data.key}>
      <CostOverTime series={data.body} />
    </Box>
  );
}

type Group = UsageTotals & { name: string };

/**
 * A ranked breakdown: a horizontal bar chart of the ranking measure, and its table (with the
 * prompt-cache reads and writes, ADR-0026: tokens counts uncached input).
 */
function Breakdown(props: { title: string; id: string; rankBy: UsageRankBy; groups: Group[] }) {
  const byCost = props.rankBy === "cost";
  const shown = props.groups.slice(0, 10);
  return (
    <Section title={props.title} id={props.id}>
      {shown.length > 0 ? (
        <ChartFigure label={`${props.title}, ${byCost ? "cost" : "tokens"}`}>
          <BarChart
            height={Math.max(120, 40 + shown.length * 36)}
            layout="horizontal"
            yAxis={[{ scaleType: "band", data: shown.map((g) => g.name), width: 150 }]}
            xAxis={[
              {
                valueFormatter: (v: number) => (byCost ? formatUsd(v) : formatCount(v)),
              },
            ]}
            series={[
              {
                data: shown.map((g) => (byCost ? g.estimated_cost_usd : g.total_tokens)),
                label: byCost ? "Estimated cost (USD)" : "Tokens",
                valueFormatter: (v) => (v == null ? "" : byCost ? formatUsd(v) : formatCount(v)),
              },
            ]}
            hideLegend
          />
        </ChartFigure>
      ) : null}
      <TableContainer>
        {/* Focusable: the keyboard scrolls it when it is wider than the column it sits in. */}
        <Table
          size="small"
          aria-label={props.title}
          tabIndex={0}
          sx={{ "&:focus-visible": { outlineOffset: -3 } }}
        >
          <TableHead>
            <TableRow>
              <TableCell>Name</TableCell>
              <TableCell align="right">Cost</TableCell>
              <TableCell align="right">Tokens</TableCell>
              <TableCell align="right">Cache read</TableCell>
              <TableCell align="right">Cache write</TableCell>
              <TableCell align="right">Interactions</TableCell>
              <TableCell>Priced</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {props.groups.map((g) => (
              <TableRow key={g.name} data-group={g.name}>
                <TableCell component="th" scope="row">
                  {g.name}
                </TableCell>
                <TableCell align="right">{formatUsd(g.estimated_cost_usd)}</TableCell>
                <TableCell align="right">{formatCount(g.total_tokens)}</TableCell>
                <TableCell align="right">{formatCount(g.cache_read_tokens)}</TableCell>
                <TableCell align="right">{formatCount(g.cache_creation_tokens)}</TableCell>
                <TableCell align="right">{formatCount(g.llm_interactions)}</TableCell>
                <TableCell>
                  <Completeness totals={g} />
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
    </Section>
  );
}

function TopSessions(props: { body: UsageSummaryResponse }) {
  return (
    <Section title="Top sessions" id="usage-top-sessions">
      <TableContainer>
        <Table
          size="small"
          aria-label="Top sessions"
          tabIndex={0}
          sx={{ "&:focus-visible": { outlineOffset: -3 } }}
        >
          <TableHead>
            <TableRow>
              <TableCell>Session</TableCell>
              <TableCell>Chain</TableCell>
              <TableCell>Status</TableCell>
              <TableCell>Created</TableCell>
              <TableCell align="right">Cost</TableCell>
              <TableCell align="right">Tokens</TableCell>
              <TableCell align="right">Interactions</TableCell>
              <TableCell>Priced</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {props.body.top_sessions.map((s) => (
              <TableRow key={s.session_id} data-session-id={s.session_id}>
                <TableCell>
                  <MuiLink component={RouterLink} to={`/sessions/${s.session_id}`}>
                    {s.alert_type} · {s.session_id.slice(0, 8)}
                  </MuiLink>
                </TableCell>
                <TableCell>{s.chain_id}</TableCell>
                <TableCell>
                  <StatusChip status={s.status} size="small" />
                </TableCell>
                <TableCell>{formatTime(s.created_at)}</TableCell>
                <TableCell align="right">{formatUsd(s.estimated_cost_usd)}</TableCell>
                <TableCell align="right">{formatCount(s.total_tokens)}</TableCell>
                <TableCell align="right">{formatCount(s.llm_interactions)}</TableCell>
                <TableCell>
                  <Completeness totals={{ ...s, sessions: 1 }} />
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
    </Section>
  );
}

/** `/usage`: LLM usage and its estimated cost over a range, by day, model, alert type, chain. */
export function UsagePage(props: { search: string }) {
  const { api } = useServices();
  const state = parseUsageState(props.search);
  const key = formatUsageState(state);
  // The data keeps the query it answers, so the page (and a test) can tell stale figures.
  const usage = useLoad(() => api.usageSummary(state).then((b) => ({ key, body: b })), [key]);
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  // Ranking is the summary's only: a new rank_by does not fetch the series again.
  const seriesKey = formatUsageState({ ...state, rank_by: DEFAULT_USAGE_STATE.rank_by });
  const series = useLoad(
    () => api.usageSeries(state, timeZone).then((b) => ({ key: seriesKey, body: b })),
    [seriesKey, timeZone],
  );
  const options = useLoad(() => api.filterOptions(), []);
  const update = (patch: Partial<UsageState>) => {
    const next = formatUsageState({ ...state, ...patch });
    navigate(next ? `/usage?${next}` : "/usage", true);
  };
  const body = usage.data?.body;
  const rankBy = body?.rank_by ?? state.rank_by;
  return (
    <section>
      <Typography variant="h1" gutterBottom>
        Usage
      </Typography>
      <Filters
        state={state}
        alertTypes={options.data?.alert_types ?? []}
        chains={options.data?.chain_ids ?? []}
        update={update}
      />
      {usage.error ? (
        <Alert severity="error" sx={{ mb: 2 }}>
          Could not load usage: {usage.error.message}
        </Alert>
      ) : null}
      {!body ? (
        usage.error ? null : (
          <LinearProgress aria-label="Loading usage" />
        )
      ) : (
        <Box data-testid="usage-loaded" data-query={usage.data?.key}>
          <Headline totals={body.totals} />
          {body.totals.llm_interactions === 0 ? (
            <Alert severity="info" sx={{ mb: 2 }}>
              No LLM usage in this range.
            </Alert>
          ) : null}
          <SeriesRegion load={series} retry={series.reload} />
          <OverTime body={body} />
          <Stack direction={{ xs: "column", lg: "row" }} spacing={2} sx={{ mb: 2 }}>
            <Box sx={{ flex: 1, minWidth: 0 }}>
              <Breakdown
                title="By model"
                id="usage-by-model"
                rankBy={rankBy}
                groups={body.by_model.map((m) => ({ ...m, name: m.model }))}
              />
            </Box>
            <Box sx={{ flex: 1, minWidth: 0 }}>
              <Breakdown
                title="By alert type"
                id="usage-by-alert-type"
                rankBy={rankBy}
                groups={body.by_alert_type.map((a) => ({ ...a, name: a.alert_type }))}
              />
            </Box>
          </Stack>
          <TopSessions body={body} />
        </Box>
      )}
    </section>
  );
}
