import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import Card from "@mui/material/Card";
import CardContent from "@mui/material/CardContent";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import type { SessionDetail } from "@tarsy/contracts";
import { type FormEvent, type ReactNode, type RefObject, useEffect, useRef, useState } from "react";
import type { TimelineItem } from "../lib/timeline.ts";
import { useServices } from "./context.tsx";
import { EntryList } from "./Timeline.tsx";

/**
 * Keeps the question form on screen while the chat above it grows (an answer streaming in), as
 * long as the keyboard is in the form and the form was on screen: the field being typed in never
 * slides away. A reader who scrolled off to read is not pulled back.
 */
function useFormFollowsChat(
  list: RefObject<HTMLElement | null>,
  form: RefObject<HTMLElement | null>,
  mayAsk: boolean,
) {
  useEffect(() => {
    const grows = list.current;
    const box = form.current;
    if (!mayAsk || !grows || !box) return;
    // Intersection is reported after layout, so when the list's resize is seen it still says
    // where the form was before the growth.
    let onScreen = false;
    const seen = new IntersectionObserver(([e]) => {
      onScreen = e?.isIntersecting ?? false;
    });
    seen.observe(box);
    const follow = new ResizeObserver(() => {
      if (onScreen && box.contains(document.activeElement))
        box.scrollIntoView({ block: "nearest" });
    });
    follow.observe(grows);
    return () => {
      seen.disconnect();
      follow.disconnect();
    };
  }, [list, form, mayAsk]);
}

/** Follow-up questions: each user message, then the answer's events streaming below it. */
export function ChatPanel(props: {
  detail: SessionDetail;
  items: TimelineItem[];
  onChange: () => void;
  /** Whether the caller may ask (`update` in the session's project); else the chat is read-only. */
  mayAsk: boolean;
  cancel: (label: string) => ReactNode;
}) {
  const { api } = useServices();
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const field = useRef<HTMLTextAreaElement>(null);
  const list = useRef<HTMLOListElement>(null);
  const form = useRef<HTMLFormElement>(null);
  useFormFollowsChat(list, form, props.mayAsk);
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
    // Send is disabled while the turn is answered: the keyboard stays in the question field.
    field.current?.focus();
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
    <Card variant="outlined" component="section" aria-labelledby="chat-h" sx={{ mt: 3 }}>
      <CardContent>
        <Typography variant="h6" component="h2" id="chat-h" gutterBottom>
          Chat
        </Typography>
        <Box
          component="ol"
          ref={list}
          aria-label="Chat messages"
          sx={{ listStyle: "none", m: 0, p: 0 }}
        >
          {messages.map((m) => {
            const stage = chatStages.find(
              (s) => s.chat_user_message_id === m.id || s.id === m.stage_id,
            );
            // The question itself is shown above; the answer is everything else of its stage.
            const answer = stage
              ? props.items.filter(
                  (i) => i.stage_id === stage.id && i.event_type !== "user_question",
                )
              : [];
            return (
              <Box component="li" key={m.id} sx={{ mb: 2 }}>
                <Box
                  sx={{
                    p: 1.5,
                    borderRadius: 1,
                    bgcolor: "action.hover",
                    borderLeft: 3,
                    borderColor: "primary.main",
                  }}
                >
                  <Typography variant="body2">
                    <strong>{m.author}:</strong> {m.content}
                  </Typography>
                </Box>
                {answer.length ? (
                  <EntryList items={answer} label="Answer" executions={stage?.executions} />
                ) : null}
                {stage && stage.status !== "active" && stage.status !== "completed" ? (
                  <Typography variant="body2" color="text.secondary">
                    Answer {stage.status}.
                  </Typography>
                ) : null}
              </Box>
            );
          })}
        </Box>
        {props.mayAsk ? null : (
          <Typography variant="body2" color="text.secondary">
            {messages.length === 0 ? "No questions yet. " : ""}You may read this chat; asking needs{" "}
            <code>update</code> in project {props.detail.project}.
          </Typography>
        )}
        {props.mayAsk ? (
          <Box
            component="form"
            ref={form}
            onSubmit={send}
            aria-label="Ask a question"
            sx={{ mt: 2 }}
          >
            <TextField
              id="chat-input"
              label="Ask a follow-up question"
              inputRef={field}
              value={text}
              multiline
              minRows={3}
              fullWidth
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) send(e);
              }}
              helperText="Ctrl+Enter sends"
            />
            <Stack direction="row" spacing={1} sx={{ alignItems: "center", mt: 1 }}>
              <Button type="submit" variant="contained" disabled={busy || !text.trim()}>
                {busy ? "Answering…" : "Send"}
              </Button>
              {busy && !sending ? props.cancel("Cancel answer") : null}
              <Typography
                component="output"
                aria-live="polite"
                variant="body2"
                color="text.secondary"
              >
                {busy ? "A turn is being answered." : ""}
              </Typography>
            </Stack>
            {error ? (
              <Alert severity="error" sx={{ mt: 1 }}>
                {error}
              </Alert>
            ) : null}
          </Box>
        ) : null}
      </CardContent>
    </Card>
  );
}
