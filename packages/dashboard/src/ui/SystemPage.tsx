import { useLoad, useServices } from "./context.tsx";
import { formatTime } from "./format.ts";

export function SystemPage() {
  const { api } = useServices();
  const servers = useLoad(() => api.mcpServers(), []);
  const warnings = useLoad(() => api.warnings(), []);
  return (
    <section>
      <h1>System</h1>
      <h2>MCP servers</h2>
      {servers.error ? (
        <p role="alert" className="error">
          {servers.error.message}
        </p>
      ) : null}
      {servers.data?.gateway_error ? (
        <p className="error">Gateway unreachable: {servers.data.gateway_error}</p>
      ) : null}
      <table aria-label="MCP servers">
        <thead>
          <tr>
            <th>Server</th>
            <th>Transport</th>
            <th>Health</th>
            <th>Tools</th>
          </tr>
        </thead>
        <tbody>
          {servers.data?.servers.map((s) => (
            <tr key={s.id}>
              <td>{s.id}</td>
              <td>{s.transport}</td>
              <td>
                <span
                  className={`badge ${s.healthy === false ? "status-failed" : s.healthy ? "status-completed" : ""}`}
                >
                  {s.healthy == null ? "unknown" : s.healthy ? "healthy" : "unhealthy"}
                </span>
              </td>
              <td>
                <details>
                  <summary>{s.tools.length} tools</summary>
                  <ul>
                    {s.tools.map((t) => (
                      <li key={t.name}>
                        <code>{t.name}</code> <span className="muted">{t.description}</span>
                      </li>
                    ))}
                  </ul>
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Warnings</h2>
      {warnings.data?.warnings.length === 0 ? <p className="muted">No warnings.</p> : null}
      <ul>
        {warnings.data?.warnings.map((w) => (
          <li key={w.id}>
            <strong>{w.category}</strong> {w.server_id ?? ""}: {w.message}{" "}
            <span className="muted">{formatTime(w.created_at)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
