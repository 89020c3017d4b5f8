import { Alert } from "@mui/material";
import type { SessionDetail } from "@tarsy/contracts";
import { can } from "../lib/access.ts";
import { ActionCard } from "./ActionCard.tsx";
import { useAccess, useLoad, useServices } from "./context.tsx";
import { SectionCard } from "./SectionCard.tsx";
import { ToneChip } from "./StatusChip.tsx";

/**
 * The session's action requests, pending ones first, each decidable here by whoever holds
 * `approve` in the session's project. Shown once the session has one. The session page
 * refreshes its detail on every `action.status` event, and this card reloads with it.
 */
export function SessionApprovals(props: { detail: SessionDetail }) {
  const { api } = useServices();
  const access = useAccess();
  const d = props.detail;
  const load = useLoad(() => api.listActions({ session_id: d.id }), [d]);
  const actions = load.data?.actions ?? [];
  if (actions.length === 0 && !load.error) return null;
  const pending = actions.filter((a) => a.status === "pending");
  const ordered = [...pending, ...actions.filter((a) => a.status !== "pending")];
  return (
    <SectionCard
      headingId="approvals-h"
      title="Approvals"
      data-testid="session-approvals"
      chips={
        pending.length > 0 ? (
          <ToneChip tone="warning" label={`${pending.length} waiting for approval`} />
        ) : null
      }
    >
      {load.error ? (
        <Alert severity="error">Could not load the approvals: {load.error.message}</Alert>
      ) : (
        ordered.map((action) => (
          <ActionCard
            key={action.id}
            action={action}
            mayDecide={can(access, "approve", d.project)}
            onChanged={load.reload}
          />
        ))
      )}
    </SectionCard>
  );
}
