import type { SessionDetail } from "@tarsy/contracts";
import { type FormEvent, type ReactNode, useState } from "react";
import type { TimelineItem } from "../lib/timeline.ts";
import { useServices } from "./context.tsx";
import { EntryList } from "./Timeline.tsx";

/** Follow-up questions: each user message, then the answer's events streaming below it. */
export function ChatPanel(props: {
  detail: SessionDetail;
  items: TimelineItem[];
  onChange: () => void;
  cancel: (label: string) => ReactNode;
}) {
  const { api } = useServices();
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const chatStages = props.detail.stages.filter((s) => s.kind === "chat");
  const busy =
    sending ||
    chatStages.some((s) => s.status === "active" || s.status === "pending") ||
    (props.detail.chat?.messages.some((m) => !m.stage_id) ?? false);
  const send = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim() || busy) return;
    setSending(true);
    setError(null);
    api.sendChat(props.detail.id, text.trim()).then(
      () => {
        setText("");
        setSending(false);
        props.onChange();
      },
      (err: Error) => {
        setSending(false);
        setError(err.message);
      },
    );
  };
  const messages = props.detail.chat?.messages ?? [];
  return (
    <section className="chat" aria-labelledby="chat-h">
      <h2 id="chat-h">Chat</h2>
      <ol className="chat-log" aria-label="Chat messages">
        {messages.map((m) => {
          const stage = chatStages.find(
            (s) => s.chat_user_message_id === m.id || s.id === m.stage_id,
          );
          // The question itself is shown above; the answer is everything else of its stage.
          const answer = stage
            ? props.items.filter((i) => i.stage_id === stage.id && i.event_type !== "user_question")
            : [];
          return (
            <li key={m.id} className="chat-turn">
              <p className="question">
                <strong>{m.author}:</strong> {m.content}
              </p>
              {answer.length ? <EntryList items={answer} label="Answer" /> : null}
              {stage && stage.status !== "active" && stage.status !== "completed" ? (
                <p className="muted">Answer {stage.status}.</p>
              ) : null}
            </li>
          );
        })}
      </ol>
      <form onSubmit={send} aria-label="Ask a question">
        <label htmlFor="chat-input">Ask a follow-up question</label>
        <textarea
          id="chat-input"
          value={text}
          rows={3}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) send(e);
          }}
        />
        <div className="actions">
          <button type="submit" disabled={busy || !text.trim()}>
            {busy ? "Answering…" : "Send"}
          </button>
          {busy && !sending ? props.cancel("Cancel answer") : null}
          <output aria-live="polite" className="muted">
            {busy ? "A turn is being answered." : ""}
          </output>
        </div>
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : null}
      </form>
    </section>
  );
}
