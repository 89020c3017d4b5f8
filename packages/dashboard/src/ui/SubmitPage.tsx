import {
  Alert,
  Button,
  FormControl,
  FormControlLabel,
  FormLabel,
  Paper,
  Radio,
  RadioGroup,
  Stack,
  TextField,
  Typography,
} from "@mui/material";
import { type FormEvent, useState } from "react";
import { initialSubmitProject, projectsWith } from "../lib/access.ts";
import {
  type AlertFormInput,
  buildAlertRequest,
  runbookFieldError,
  runbookLabel,
} from "../lib/alert-form.ts";
import { ApiError } from "../lib/api.ts";
import { useAccess, useLoad, useServices } from "./context.tsx";
import { NATIVE_SELECT } from "./fields.ts";
import { navigate } from "./router.tsx";

type Errors = Partial<Record<"data" | "runbook" | "mcpOverride" | "form", string>>;

export function SubmitPage() {
  const { api } = useServices();
  const access = useAccess();
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
  // The projects the caller may create in; the default one is chosen until they pick another.
  const projects = projectsWith(access, "create");
  const project =
    input.project && projects.includes(input.project)
      ? input.project
      : initialSubmitProject(access);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const result = buildAlertRequest({ ...input, project });
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
  if (access.status === "ready" && projects.length === 0) {
    return (
      <section>
        <Typography variant="h1" gutterBottom>
          Submit an alert
        </Typography>
        <Alert severity="info" sx={{ maxWidth: 900 }}>
          You ({access.me.user}) may not submit alerts in any project. Ask an administrator for{" "}
          <code>create</code> in a project.
        </Alert>
      </section>
    );
  }
  return (
    <section>
      <Typography variant="h1" gutterBottom>
        Submit an alert
      </Typography>
      <Paper variant="outlined" sx={{ p: 2, maxWidth: 900 }}>
        <Stack component="form" spacing={2} onSubmit={submit} noValidate aria-label="Submit alert">
          {access.status === "ready" ? (
            <TextField
              id="project"
              select
              label="Project"
              value={project}
              onChange={(e) => set({ project: e.target.value })}
              helperText="The projects where you may submit alerts"
              slotProps={NATIVE_SELECT}
            >
              {projects.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </TextField>
          ) : null}
          <TextField
            id="alert-type"
            select
            label="Alert type"
            value={input.alertType}
            onChange={(e) => set({ alertType: e.target.value })}
            slotProps={NATIVE_SELECT}
          >
            <option value="">
              Default{types.data ? ` (${types.data.default_alert_type})` : ""}
            </option>
            {types.data?.alert_types.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </TextField>
          <FormControl>
            <FormLabel id="format-label">Data format</FormLabel>
            <RadioGroup
              row
              aria-labelledby="format-label"
              name="format"
              value={input.format}
              onChange={(e) => set({ format: e.target.value === "text" ? "text" : "json" })}
            >
              <FormControlLabel value="json" control={<Radio />} label="JSON" />
              <FormControlLabel value="text" control={<Radio />} label="Free text" />
            </RadioGroup>
          </FormControl>
          <TextField
            id="data"
            label="Alert data"
            multiline
            minRows={10}
            value={input.data}
            onChange={(e) => set({ data: e.target.value })}
            error={Boolean(errors.data)}
            helperText={errors.data}
            placeholder={
              input.format === "json"
                ? '{"alertname": "PodCrashLooping", "namespace": "prod"}'
                : "Describe the alert"
            }
            slotProps={{ htmlInput: { spellCheck: false, sx: { fontFamily: "monospace" } } }}
          />
          {runbooks.data && runbooks.data.length > 0 ? (
            <TextField
              id="runbook-pick"
              select
              label="Runbook from the repository"
              value={runbooks.data.includes(input.runbook) ? input.runbook : ""}
              onChange={(e) => set({ runbook: e.target.value })}
              slotProps={NATIVE_SELECT}
            >
              <option value="">Default runbook (or a URL below)</option>
              {runbooks.data.map((url) => (
                <option key={url} value={url}>
                  {runbookLabel(url)}
                </option>
              ))}
            </TextField>
          ) : null}
          <TextField
            id="runbook"
            type="url"
            label="Runbook URL"
            value={input.runbook}
            onChange={(e) => set({ runbook: e.target.value })}
            error={Boolean(errors.runbook)}
            helperText={errors.runbook}
          />
          <TextField
            id="mcp-override"
            label="MCP override (optional)"
            multiline
            minRows={3}
            value={input.mcpOverride}
            onChange={(e) => set({ mcpOverride: e.target.value })}
            error={Boolean(errors.mcpOverride)}
            helperText={
              errors.mcpOverride ?? (
                <>
                  One server per line, <code>server: tool1, tool2</code>
                  {servers.data
                    ? ` · servers: ${servers.data.servers.map((s) => s.id).join(", ") || "none"}`
                    : ""}
                </>
              )
            }
            slotProps={{ htmlInput: { spellCheck: false, sx: { fontFamily: "monospace" } } }}
          />
          {errors.form ? <Alert severity="error">{errors.form}</Alert> : null}
          <div>
            <Button
              type="submit"
              variant="contained"
              disabled={sending || access.status === "loading"}
            >
              {sending ? "Submitting…" : "Submit alert"}
            </Button>
          </div>
        </Stack>
      </Paper>
    </section>
  );
}
