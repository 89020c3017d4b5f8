import { AlertSubmitRequestSchema } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import { buildAlertRequest, runbookFieldError, runbookLabel } from "./alert-form.ts";
import { resolveWsUrl } from "./config.ts";

const base = { alertType: "", format: "json" as const, data: "", runbook: "", mcpOverride: "" };

describe("buildAlertRequest", () => {
  it("builds an API-valid body from JSON data, runbook and an MCP override", () => {
    const result = buildAlertRequest({
      ...base,
      alertType: "kubernetes",
      data: '{"pod":"api-1","ns":"prod"}',
      runbook: "https://runbooks.example.com/pod.md",
      mcpOverride: "kubernetes-server: pods_list, pods_log\neverything",
      project: "payments",
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.request).toEqual({
      alert_type: "kubernetes",
      project: "payments",
      data: { pod: "api-1", ns: "prod" },
      runbook: "https://runbooks.example.com/pod.md",
      mcp: {
        servers: [
          { name: "kubernetes-server", tools: ["pods_list", "pods_log"] },
          { name: "everything" },
        ],
      },
    });
    expect(AlertSubmitRequestSchema.safeParse(result.request).success).toBe(true);
  });

  it("rejects bad JSON, scalars, bad URLs and bad server names before sending", () => {
    const r = buildAlertRequest({
      ...base,
      data: "{oops",
      runbook: "ftp://x",
      mcpOverride: "bad name!",
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.data).toMatch(/Not valid JSON/);
    expect(r.errors.runbook).toMatch(/http/);
    expect(r.errors.mcpOverride).toMatch(/bad name!/);
    const scalar = buildAlertRequest({ ...base, data: "42" });
    expect(scalar.ok || scalar.errors.data).toMatch(/object or an array/);
    expect(buildAlertRequest({ ...base, data: "  " }).ok).toBe(false);
  });

  it("sends free text as is", () => {
    const r = buildAlertRequest({ ...base, format: "text", data: "CPU high on node-3" });
    expect(r).toEqual({ ok: true, request: { data: "CPU high on node-3" } });
  });
});

describe("resolveWsUrl", () => {
  const loc = { href: "http://tarsy.local:8080/sessions?x=1", search: "?x=1" };
  it("defaults to the same origin and honours config, then the query parameter", () => {
    expect(resolveWsUrl(loc, null, null)).toBe("ws://tarsy.local:8080/api/v1/ws");
    expect(resolveWsUrl(loc, { ws_url: "ws://relay:8081/api/v1/ws" }, null)).toBe(
      "ws://relay:8081/api/v1/ws",
    );
    const q = { href: "https://t/x?ws=ws%3A%2F%2Fr%3A9%2Fws", search: "?ws=ws%3A%2F%2Fr%3A9%2Fws" };
    expect(resolveWsUrl(q, { ws_url: "/other" }, "ws://remembered/ws")).toBe("ws://r:9/ws");
    expect(resolveWsUrl({ href: "https://t/", search: "" }, null, null)).toBe("wss://t/api/v1/ws");
  });
});

describe("runbook picker helpers", () => {
  it("names a listed runbook by its path in the repository", () => {
    expect(runbookLabel("https://github.com/acme/runbooks/blob/main/sre/k8s/oom.md")).toBe(
      "sre/k8s/oom.md",
    );
    expect(runbookLabel("https://git.internal/x/y.md")).toBe("y.md");
  });

  it("turns the server's refusal of the runbook field into that field's error", () => {
    const details = { fields: [{ path: "runbook", message: "host evil.example is not allowed" }] };
    expect(runbookFieldError(details, "invalid runbook URL")).toBe(
      "invalid runbook URL: host evil.example is not allowed",
    );
    expect(runbookFieldError({ fields: [{ path: "data", message: "x" }] }, "bad")).toBeUndefined();
    expect(runbookFieldError(undefined, "bad")).toBeUndefined();
  });
});
