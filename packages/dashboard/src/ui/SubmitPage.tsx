import { type FormEvent, useState } from "react";
import {
  type AlertFormInput,
  buildAlertRequest,
  runbookFieldError,
  runbookLabel,
} from "../lib/alert-form.ts";
import { ApiError } from "../lib/api.ts";
import { useLoad, useServices } from "./context.tsx";
import { navigate } from "./router.tsx";

type Errors = Partial<Record<"data" | "runbook" | "mcpOverride" | "form", string>>;

export function SubmitPage() {
  const { api } = useServices();
  const types = useLoad(() => api.alertTypes(), []);
  const servers = useLoad(() => api.mcpServers(), []);
  // Listing is fail-open: without it the form still takes any URL.
  const runbooks = useLoad(() => api.runbooks().catch((): string[] => []), []);
  const [input, setInput] = useState<AlertFormInput>({
    alertType: "",
    format: "json",
    data: "",
    runbook: "",
    mcpOverride: "",
  });
  const [errors, setErrors] = useState<Errors>({});
  const [sending, setSending] = useState(false);
  const set = (patch: Partial<AlertFormInput>) => setInput((i) => ({ ...i, ...patch }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const result = buildAlertRequest(input);
    if (!result.ok) {
      setErrors(result.errors);
      return;
    }
    setErrors({});
    setSending(true);
    api.submitAlert(result.request).then(
      (res) => navigate(`/sessions/${res.session_id}`),
      (err: Error) => {
        setSending(false);
        const runbook =
          err instanceof ApiError ? runbookFieldError(err.details, err.message) : undefined;
        setErrors(runbook ? { runbook } : { form: err.message });
      },
    );
  };
  const describedBy = (field: keyof Errors) => (errors[field] ? `${field}-error` : undefined);
  return (
    <section>
      <h1>Submit an alert</h1>
      <form className="submit" onSubmit={submit} noValidate aria-label="Submit alert">
        <label>
          Alert type
          <select value={input.alertType} onChange={(e) => set({ alertType: e.target.value })}>
            <option value="">
              Default{types.data ? ` (${types.data.default_alert_type})` : ""}
            </option>
            {types.data?.alert_types.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Data format</legend>
          {(["json", "text"] as const).map((f) => (
            <label key={f} className="check">
              <input
                type="radio"
                name="format"
                checked={input.format === f}
                onChange={() => set({ format: f })}
              />
              {f === "json" ? "JSON" : "Free text"}
            </label>
          ))}
        </fieldset>
        <label>
          Alert data
          <textarea
            rows={10}
            value={input.data}
            onChange={(e) => set({ data: e.target.value })}
            aria-invalid={Boolean(errors.data)}
            aria-describedby={describedBy("data")}
            placeholder={
              input.format === "json"
                ? '{"alertname": "PodCrashLooping", "namespace": "prod"}'
                : "Describe the alert"
            }
          />
        </label>
        {errors.data ? (
          <p id="data-error" className="error">
            {errors.data}
          </p>
        ) : null}
        {runbooks.data && runbooks.data.length > 0 ? (
          <label>
            Runbook from the repository
            <select
              value={runbooks.data.includes(input.runbook) ? input.runbook : ""}
              onChange={(e) => set({ runbook: e.target.value })}
            >
              <option value="">Default runbook (or a URL below)</option>
              {runbooks.data.map((url) => (
                <option key={url} value={url}>
                  {runbookLabel(url)}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <label>
          Runbook URL
          <input
            type="url"
            value={input.runbook}
            onChange={(e) => set({ runbook: e.target.value })}
            aria-invalid={Boolean(errors.runbook)}
            aria-describedby={describedBy("runbook")}
          />
        </label>
        {errors.runbook ? (
          <p id="runbook-error" className="error">
            {errors.runbook}
          </p>
        ) : null}
        <label>
          MCP override (optional; one server per line, <code>server: tool1, tool2</code>)
          <textarea
            rows={3}
            value={input.mcpOverride}
            onChange={(e) => set({ mcpOverride: e.target.value })}
            aria-invalid={Boolean(errors.mcpOverride)}
            aria-describedby={describedBy("mcpOverride")}
          />
        </label>
        {errors.mcpOverride ? (
          <p id="mcpOverride-error" className="error">
            {errors.mcpOverride}
          </p>
        ) : null}
        {servers.data ? (
          <p className="muted">
            Servers: {servers.data.servers.map((s) => s.id).join(", ") || "none"}
          </p>
        ) : null}
        {errors.form ? (
          <p role="alert" className="error">
            {errors.form}
          </p>
        ) : null}
        <button type="submit" disabled={sending}>
          {sending ? "Submitting…" : "Submit alert"}
        </button>
      </form>
    </section>
  );
}
