import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import CircularProgress from "@mui/material/CircularProgress";
import Typography from "@mui/material/Typography";
import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { useMemo } from "react";
import { can } from "../lib/access.ts";
import { REVIEW_PERMISSION } from "../lib/review.ts";
import { timelineItems } from "../lib/timeline.ts";
import { ChatPanel } from "./ChatPanel.tsx";
import { CopyButton } from "./CopyButton.tsx";
import { useAccess } from "./context.tsx";
import { ErrorCard } from "./ErrorCard.tsx";
import { prettyData } from "./format.ts";
import { Markdown } from "./Markdown.tsx";
import { NotificationsCard } from "./NotificationsCard.tsx";
import { ReviewPanel } from "./ReviewPanel.tsx";
import { ScoreCard } from "./ScoreCard.tsx";
import { SectionCard } from "./SectionCard.tsx";
import { SessionApprovals } from "./SessionApprovals.tsx";
import {
  AlertData,
  CancelButton,
  NavButton,
  SessionHeader,
  StageStepper,
} from "./SessionHeader.tsx";
import { SessionMemories } from "./SessionMemories.tsx";
import { SessionTimeline } from "./Timeline.tsx";
import { useLiveSession } from "./useSession.ts";

/** The final analysis or the executive summary: markdown in a card, with a copy button. */
function ResultCard(props: { id: string; title: string; text: string }) {
  return (
    <SectionCard
      headingId={props.id}
      title={props.title}
      action={<CopyButton label={`Copy ${props.title.toLowerCase()}`} text={() => props.text} />}
    >
      <Markdown text={props.text} />
    </SectionCard>
  );
}

export function SessionPage(props: { sessionId: string }) {
  const { detail, timeline, error, deleted, reload } = useLiveSession(props.sessionId);
  const access = useAccess();
  const items = useMemo(() => timelineItems(timeline), [timeline]);
  // Chat stages have their panel; the scoring stage ("Evaluation & Learning") is the Score card.
  const stages = useMemo(
    () => detail?.stages.filter((s) => s.kind !== "chat" && s.kind !== "scoring") ?? [],
    [detail],
  );
  const chatStageIds = useMemo(
    () => new Set(detail?.stages.filter((s) => s.kind === "chat").map((s) => s.id)),
    [detail],
  );
  const scoringStageIds = useMemo(
    () => new Set(detail?.stages.filter((s) => s.kind === "scoring").map((s) => s.id)),
    [detail],
  );
  const mainItems = useMemo(
    () =>
      items.filter(
        (i) => !i.stage_id || !(chatStageIds.has(i.stage_id) || scoringStageIds.has(i.stage_id)),
      ),
    [items, chatStageIds, scoringStageIds],
  );
  const alertCode = useMemo(() => (detail ? prettyData(detail.alert_data) : ""), [detail]);
  if (deleted) {
    return (
      <Box component="section">
        <Typography variant="h5" component="h1" gutterBottom>
          Session
        </Typography>
        <Alert severity="warning" role="status">
          Session {props.sessionId} was deleted.{" "}
          <NavButton to="/" variant="text">
            Back to the sessions
          </NavButton>
        </Alert>
      </Box>
    );
  }
  if (error && !detail) {
    return (
      <Box component="section">
        <Typography variant="h5" component="h1" gutterBottom>
          Session
        </Typography>
        <Alert severity="error">
          Could not load session {props.sessionId}: {error.message}
        </Alert>
      </Box>
    );
  }
  if (!detail) {
    return (
      <Box aria-busy="true" sx={{ display: "flex", gap: 1, alignItems: "center", p: 2 }}>
        <CircularProgress size={20} aria-hidden /> Loading session…
      </Box>
    );
  }
  const terminal = TERMINAL_SESSION_STATUSES.includes(detail.status);
  return (
    <Box component="article" aria-labelledby="session-h" sx={{ pb: 6 }}>
      <SessionHeader detail={detail} onChange={reload} />
      <ErrorCard detail={detail} />
      <SessionApprovals detail={detail} />
      <AlertData code={alertCode} />
      {stages.length > 0 ? <StageStepper stages={stages} /> : null}

      <Box component="section" aria-labelledby="timeline-h">
        <Typography variant="h6" component="h2" id="timeline-h">
          Timeline
        </Typography>
        <SessionTimeline stages={stages} items={mainItems} live={!terminal} />
        {!terminal && items.length === 0 ? (
          <Typography color="text.secondary" aria-busy="true" sx={{ py: 2 }}>
            Waiting for the first event…
          </Typography>
        ) : null}
      </Box>

      {detail.final_analysis ? (
        <ResultCard id="fa-h" title="Final analysis" text={detail.final_analysis} />
      ) : null}
      {detail.executive_summary ? (
        <ResultCard id="es-h" title="Executive summary" text={detail.executive_summary} />
      ) : detail.executive_summary_error ? (
        <Alert severity="info" sx={{ mt: 3 }}>
          Executive summary unavailable: {detail.executive_summary_error}
        </Alert>
      ) : null}

      <ScoreCard detail={detail} mayScore={can(access, REVIEW_PERMISSION, detail.project)} />
      <ReviewPanel detail={detail} mayReview={can(access, REVIEW_PERMISSION, detail.project)} />
      <SessionMemories detail={detail} />
      <NotificationsCard detail={detail} />

      {detail.chat_enabled && terminal ? (
        <ChatPanel
          detail={detail}
          items={items.filter((i) => i.stage_id && chatStageIds.has(i.stage_id))}
          onChange={reload}
          mayAsk={can(access, "update", detail.project)}
          cancel={(label) =>
            can(access, "cancel", detail.project) ? (
              <CancelButton sessionId={detail.id} label={label} onDone={reload} />
            ) : null
          }
        />
      ) : null}
    </Box>
  );
}
