import { Alert, Table, TableBody, TableCell, TableHead, TableRow } from "@mui/material";
import type { NotificationDelivery, SessionDetail } from "@tarsy/contracts";
import { useEffect } from "react";
import { useLoad, useServices } from "./context.tsx";
import { formatTime } from "./format.ts";
import { SectionCard } from "./SectionCard.tsx";
import { type Tone, ToneChip } from "./StatusChip.tsx";

/** While a delivery is still being tried, the card looks again this often. */
const REFRESH_MS = 5_000;

const STATUS: Record<NotificationDelivery["status"], { label: string; tone: Tone }> = {
  sending: { label: "sending", tone: "warning" },
  sent: { label: "sent", tone: "success" },
  failed: { label: "failed", tone: "error" },
};

/** `slack` → Slack, `webhook:0` → Webhook 1 (the order of system.notifications.webhooks). */
export function targetLabel(target: string): string {
  if (target === "slack") return "Slack";
  const webhook = /^webhook:(\d+)$/.exec(target);
  return webhook ? `Webhook ${Number(webhook[1]) + 1}` : target;
}

/**
 * Who was told about the session: each Slack and webhook delivery with its status, attempts
 * and, while it is retried or once it failed, the last error. Shown once there is one.
 */
export function NotificationsCard(props: { detail: SessionDetail }) {
  const { api } = useServices();
  const d = props.detail;
  const load = useLoad(() => api.sessionNotifications(d.id), [d.id, d.status]);
  const deliveries = load.data?.deliveries ?? [];
  const retrying = deliveries.some((x) => x.status === "sending");
  const { reload } = load;
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload is a new function each render
  useEffect(() => {
    if (!retrying) return;
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [retrying]);
  if (deliveries.length === 0 && !load.error) return null;
  return (
    <SectionCard headingId="notifications-h" title="Notifications" data-testid="notifications-card">
      {load.error ? (
        <Alert severity="error">Could not load the notifications: {load.error.message}</Alert>
      ) : (
        <Table size="small" aria-labelledby="notifications-h">
          <TableHead>
            <TableRow>
              <TableCell>Target</TableCell>
              <TableCell>Event</TableCell>
              <TableCell>Status</TableCell>
              <TableCell align="right">Attempts</TableCell>
              <TableCell>Sent, or why not</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {deliveries.map((x) => (
              <TableRow key={x.id}>
                <TableCell>{targetLabel(x.target)}</TableCell>
                <TableCell>{x.event.replace("_", " ")}</TableCell>
                <TableCell>
                  <ToneChip
                    label={
                      x.status === "sending" && x.last_error ? "retrying" : STATUS[x.status].label
                    }
                    tone={STATUS[x.status].tone}
                  />
                </TableCell>
                <TableCell align="right">{x.attempts}</TableCell>
                <TableCell>
                  {x.status === "sent" ? formatTime(x.sent_at) : (x.last_error ?? "—")}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
    </SectionCard>
  );
}
