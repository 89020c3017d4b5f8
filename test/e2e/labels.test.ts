import { resolve } from "node:path";
import type {
  FilterOptionsResponse,
  LLMInteractionDetail,
  SessionDetail,
  SessionListResponse,
  SessionStatusResponse,
  SystemConfigResponse,
  TraceListResponse,
} from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseExposition, total } from "./prometheus.ts";
import { saveLogs, submitAlert, timeline, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/labels");
const SCENARIOS = ["LabelValid", "LabelReminded", "LabelTwice", "LabelAbsent", "LabelMulti"];

/**
 * Session labels end to end: every service a process, the scripted LLM ending each executive
 * summary its own way (testdata/labels). Labels are read through the API as clients poll them.
 */
describe("e2e: session labels", () => {
  let sys: E2E;
  const ids: Record<string, string> = {};
  const get = async <T>(path: string): Promise<T> => {
    const r = await sys.api<T>(path);
    expect(r.status, `GET ${path}`).toBe(200);
    return r.body;
  };
  const status = (alertType: string) =>
    get<SessionStatusResponse>(`/api/v1/sessions/${ids[alertType]}/status`);
  /** The executive summary's LLM calls: each one's last user message and its answer. */
  const summaryCalls = async (alertType: string) => {
    const id = ids[alertType];
    const trace = await get<TraceListResponse>(`/api/v1/sessions/${id}/trace`);
    const all = [
      ...trace.session_interactions,
      ...trace.stages.flatMap((s) => s.executions.flatMap((e) => e.llm_interactions)),
    ].filter((i) => i.interaction_type === "executive_summary");
    return Promise.all(
      all.map(async (i) => {
        const d = await get<LLMInteractionDetail>(`/api/v1/sessions/${id}/trace/llm/${i.id}`);
        const users = d.conversation.filter((m) => m.role === "user");
        return { user: users.at(-1)?.content ?? "", users: users.length };
      }),
    );
  };
  const summaryEvents = async (alertType: string) =>
    (await timeline(sys, ids[alertType] ?? "")).filter((e) => e.stage_id === null);

  beforeAll(async () => {
    sys = await bootSystem({
      configDir: CONFIG,
      llmScriptPath: resolve(CONFIG, "llm-script.yaml"),
    });
    for (const alertType of SCENARIOS) ids[alertType] = await submitAlert(sys, alertType);
    for (const alertType of SCENARIOS) {
      await waitStatus(sys, ids[alertType] ?? "", ["completed"], 90_000);
    }
  }, 240_000);

  afterAll(async () => {
    saveLogs(sys, "labels");
    await sys?.stop();
  });

  it("a valid LABELS line: canonical names on /status, the line stripped from the summary", async () => {
    expect(await status("LabelValid")).toMatchObject({
      status: "completed",
      executive_summary: "A maintenance job restarted the pod; it recovered.",
      labels: ["noise"],
    });
    const calls = await summaryCalls("LabelValid");
    expect(calls).toHaveLength(1);
    // The prompt's label layers: the built-in map's names in order, the exclusive format last.
    expect(calls[0]?.user).toContain("- watch: For:");
    expect(calls[0]?.user.indexOf("- action:")).toBeGreaterThan(
      calls[0]?.user.indexOf("- watch:") ?? 0,
    );
    expect(calls[0]?.user.trimEnd().endsWith("If none applies, do not write a LABELS line.")).toBe(
      true,
    );
    const events = await summaryEvents("LabelValid");
    expect(events.map((e) => [e.event_type, e.content])).toEqual([
      ["executive_summary", "A maintenance job restarted the pod; it recovered."],
    ]);
  });

  it("an unreadable line, fixed after one reminder: the retry's labels and summary", async () => {
    expect(await status("LabelReminded")).toMatchObject({
      executive_summary: "The pod crashes on its memory limit; raise it.",
      labels: ["action"],
    });
    const calls = await summaryCalls("LabelReminded");
    expect(calls).toHaveLength(2);
    expect(calls[1]?.users).toBe(2);
    expect(calls[1]?.user).toContain('Your last line "LABELS: urgent" could not be read');
    // The first answer stays an LLM response; the summary event is the corrected one.
    const events = await summaryEvents("LabelReminded");
    expect(events.map((e) => [e.event_type, e.content])).toEqual([
      ["llm_response", "The pod crashes on its memory limit.\nLABELS: urgent"],
      ["executive_summary", "The pod crashes on its memory limit; raise it."],
    ]);
  });

  it("unreadable twice: labels null, the first summary unstripped, the failure counted", async () => {
    const twice = await status("LabelTwice");
    expect(twice).toMatchObject({
      status: "completed",
      executive_summary: "The evidence is thin.\nLABELS: unsure",
      labels: null,
    });
    expect(await summaryCalls("LabelTwice")).toHaveLength(2);
    const events = await summaryEvents("LabelTwice");
    expect(events.map((e) => [e.event_type, e.content])).toEqual([
      ["executive_summary", "The evidence is thin.\nLABELS: unsure"],
      ["llm_response", "The evidence is thin.\nLABELS: maybe"],
    ]);
    const runner = Object.entries(sys.stack.metricsUrls).filter(([name]) =>
      name.startsWith("agent-runner"),
    );
    expect(runner.length).toBeGreaterThan(0);
    let failures = 0;
    for (const [, url] of runner) {
      const samples = parseExposition(await (await fetch(url)).text());
      failures += total(samples, "tarsy_session_labels_parse_failures_total", {
        label_map: "builtin",
      });
    }
    expect(failures).toBe(1);
  });

  it("no LABELS line: labels [] and the summary as written, with no reminder", async () => {
    expect(await status("LabelAbsent")).toMatchObject({
      executive_summary: "A ticket should be filed for the dashboard.",
      labels: [],
    });
    expect(await summaryCalls("LabelAbsent")).toHaveLength(1);
  });

  it("a multi map: every named label, unique, in the map's order", async () => {
    expect(await status("LabelMulti")).toMatchObject({
      executive_summary: "Page the on-call and tune the rule.",
      labels: ["page", "modify_detection_rules"],
    });
    const [call] = await summaryCalls("LabelMulti");
    expect(call?.user).toContain("Tag every follow-up the analysis asks for.");
    expect(call?.user).toContain("LABELS: <comma-separated unique labels from the list>");
  });

  it("the detail and the list carry labels; ?label= filters on an exact name", async () => {
    const multi = await get<SessionDetail>(`/api/v1/sessions/${ids.LabelMulti}`);
    expect(multi.labels).toEqual(["page", "modify_detection_rules"]);
    const list = await get<SessionListResponse>("/api/v1/sessions?page_size=50");
    const byId = new Map(list.sessions.map((s) => [s.id, s.labels]));
    expect(SCENARIOS.map((t) => byId.get(ids[t] ?? ""))).toEqual([
      ["noise"],
      ["action"],
      null,
      [],
      ["page", "modify_detection_rules"],
    ]);
    const only = async (label: string) =>
      (await get<SessionListResponse>(`/api/v1/sessions?label=${label}`)).sessions.map((s) => s.id);
    expect(await only("noise")).toEqual([ids.LabelValid]);
    expect(await only("page")).toEqual([ids.LabelMulti]);
    expect(await only("watch")).toEqual([]);
    const options = await get<FilterOptionsResponse>("/api/v1/sessions/filter-options");
    expect(options.labels).toEqual(["action", "modify_detection_rules", "noise", "page"]);
  });

  it("an unknown or malformed label filter is a 400 in the error shape", async () => {
    const unknown = await sys.api<{ error: { code: string; message: string } }>(
      "/api/v1/sessions?label=Noise",
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: "validation_failed",
      message: 'invalid query: label "Noise" is not in any configured label map',
    });
    const malformed = await sys.api<{ error: { code: string; message: string } }>(
      "/api/v1/sessions?label=9lives",
    );
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("validation_failed");
    expect(malformed.body.error.message).toContain("label");
  });

  it("the system config shows the catalog and the selectors", async () => {
    const config = await get<SystemConfigResponse>("/api/v1/system/config");
    expect(config.label_maps.map((m) => [m.name, m.multi, m.labels.map((l) => l.label)])).toEqual([
      ["ops-tags", true, ["watch", "page", "modify_detection_rules"]],
      ["builtin", false, ["watch", "action", "noise"]],
    ]);
    expect(config.defaults.label_map).toBeNull();
    expect(config.chains.find((c) => c.id === "multi")?.label_map).toBe("ops-tags");
  });
});
