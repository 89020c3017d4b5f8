import { useLoad, useServices } from "./context.tsx";
import { formatTime, prettyJson } from "./format.ts";
import { Link, navigate } from "./router.tsx";

function LlmDetail(props: { sessionId: string; id: string }) {
  const { api } = useServices();
  const { data, error } = useLoad(() => api.llmInteraction(props.sessionId, props.id), [props.id]);
  if (error)
    return (
      <p role="alert" className="error">
        {error.message}
      </p>
    );
  if (!data) return <p aria-busy="true">Loading interaction…</p>;
  return (
    <section aria-labelledby="llm-h" className="interaction">
      <h2 id="llm-h">
        LLM interaction: {data.interaction_type} · {data.model_name}
      </h2>
      <p className="muted">
        {data.provider ?? ""} · tokens {data.input_tokens ?? 0} in / {data.output_tokens ?? 0} out ·{" "}
        {data.duration_ms ?? "—"} ms
      </p>
      {data.error_message ? <p className="error">{data.error_message}</p> : null}
      <h3>Conversation as sent</h3>
      <ol className="conversation" aria-label="Conversation">
        {data.conversation.map((m, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the conversation is fixed and ordered
          <li key={i} className={`msg role-${m.role}`}>
            <strong>
              {m.role}
              {m.tool_name ? ` (${m.tool_name})` : ""}
            </strong>
            <pre>{m.content}</pre>
            {m.tool_calls ? <pre>{prettyJson(m.tool_calls)}</pre> : null}
          </li>
        ))}
      </ol>
      {data.thinking_content ? (
        <>
          <h3>Thinking</h3>
          <pre>{data.thinking_content}</pre>
        </>
      ) : null}
      <h3>Response</h3>
      <pre>{data.response_text ?? ""}</pre>
      {data.tool_calls ? (
        <>
          <h3>Tool calls</h3>
          <pre>{prettyJson(data.tool_calls)}</pre>
        </>
      ) : null}
    </section>
  );
}

function McpDetail(props: { sessionId: string; id: string }) {
  const { api } = useServices();
  const { data, error } = useLoad(() => api.mcpInteraction(props.sessionId, props.id), [props.id]);
  if (error)
    return (
      <p role="alert" className="error">
        {error.message}
      </p>
    );
  if (!data) return <p aria-busy="true">Loading interaction…</p>;
  return (
    <section aria-labelledby="mcp-h" className="interaction">
      <h2 id="mcp-h">
        MCP {data.interaction_type}: {data.server_name}
        {data.tool_name ? `.${data.tool_name}` : ""}
      </h2>
      {data.error_message ? <p className="error">{data.error_message}</p> : null}
      <h3>Arguments</h3>
      <pre>{prettyJson(data.tool_arguments)}</pre>
      <h3>Result</h3>
      <pre>{prettyJson(data.tool_result)}</pre>
      {data.available_tools != null ? (
        <details>
          <summary>Available tools</summary>
          <pre>{prettyJson(data.available_tools)}</pre>
        </details>
      ) : null}
    </section>
  );
}

/** LLM and MCP interactions of one execution in the order they happened. */
function interleave<A extends { created_at: string }, B extends { created_at: string }>(
  a: A[],
  b: B[],
): (A | B)[] {
  return [...a, ...b].sort((x, y) => x.created_at.localeCompare(y.created_at));
}

/** Stage → execution → LLM and MCP interactions; `?llm=` / `?mcp=` opens one. */
export function TracePage(props: { sessionId: string; search: string }) {
  const { api } = useServices();
  const { data, error } = useLoad(() => api.trace(props.sessionId), [props.sessionId]);
  const q = new URLSearchParams(props.search);
  const base = `/sessions/${props.sessionId}/trace`;
  const open = (kind: "llm" | "mcp", id: string) =>
    navigate(`${base}?${kind}=${encodeURIComponent(id)}`);
  const llm = q.get("llm");
  const mcp = q.get("mcp");
  return (
    <section className="trace">
      <p>
        <Link to={`/sessions/${props.sessionId}`}>← Back to session</Link>
      </p>
      <h1>Trace</h1>
      {error ? (
        <p role="alert" className="error">
          {error.message}
        </p>
      ) : null}
      <div className="trace-grid">
        <nav aria-label="Interactions" className="trace-tree">
          {data?.stages.map((stage) => (
            <section key={stage.stage_id}>
              <h2>{stage.stage_name}</h2>
              {stage.executions.map((ex) => (
                <section key={ex.execution_id} className="trace-exec">
                  <h3>{ex.agent_name}</h3>
                  <ul>
                    {interleave(ex.llm_interactions, ex.mcp_interactions).map((i) =>
                      "model_name" in i ? (
                        <li key={i.id}>
                          <button
                            type="button"
                            className="link"
                            aria-current={llm === i.id}
                            onClick={() => open("llm", i.id)}
                          >
                            LLM {i.interaction_type}
                            {i.iteration != null ? ` #${i.iteration}` : ""} · {i.total_tokens ?? 0}{" "}
                            tok
                          </button>
                        </li>
                      ) : (
                        <li key={i.id}>
                          <button
                            type="button"
                            className="link"
                            aria-current={mcp === i.id}
                            onClick={() => open("mcp", i.id)}
                          >
                            MCP {i.interaction_type} {i.server_name}
                            {i.tool_name ? `.${i.tool_name}` : ""}
                          </button>
                        </li>
                      ),
                    )}
                  </ul>
                </section>
              ))}
            </section>
          ))}
          {data && data.session_interactions.length > 0 ? (
            <section>
              <h2>Session</h2>
              <ul>
                {data.session_interactions.map((i) => (
                  <li key={i.id}>
                    <button type="button" className="link" onClick={() => open("llm", i.id)}>
                      LLM {i.interaction_type} · {formatTime(i.created_at)}
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          ) : null}
        </nav>
        <div className="trace-detail">
          {llm ? <LlmDetail sessionId={props.sessionId} id={llm} /> : null}
          {mcp ? <McpDetail sessionId={props.sessionId} id={mcp} /> : null}
          {!llm && !mcp ? <p className="muted">Choose an interaction.</p> : null}
        </div>
      </div>
    </section>
  );
}
