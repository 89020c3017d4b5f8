import { List, ListItem, ListItemText, Typography } from "@mui/material";
import type { MemoryResponse, SessionDetail } from "@tarsy/contracts";
import { useLoad, useServices } from "./context.tsx";
import { MemoryChips } from "./MemoryChips.tsx";
import { SectionCard } from "./SectionCard.tsx";

function MemoryList(props: { memories: MemoryResponse[]; label: string }) {
  return (
    <List dense disablePadding aria-label={props.label}>
      {props.memories.map((m) => (
        <ListItem key={m.id} disableGutters data-memory-id={m.id} alignItems="flex-start">
          <ListItemText
            primary={m.content}
            secondary={<MemoryChips memory={m} showDeprecated />}
            slotProps={{ secondary: { component: "div", sx: { mt: 0.5 } } }}
          />
        </ListItem>
      ))}
    </List>
  );
}

/**
 * Investigation memory on the session page (#24): the memories its agents were given, and
 * those learned from it (after it was scored). Each card shows only when it has any.
 */
export function SessionMemories(props: { detail: SessionDetail }) {
  const { api } = useServices();
  const id = props.detail.id;
  // Learned memories appear once the session is scored: read again when its scoring changes.
  const scoring = props.detail.scoring_status ?? "";
  const injected = useLoad(() => api.injectedMemories(id), [id]);
  const learned = useLoad(() => api.sessionMemories(id), [id, scoring]);
  return (
    <>
      {injected.data?.length ? (
        <SectionCard headingId="injected-memories-h" title="Injected memories">
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
            Learned from earlier investigations and given to this session's agents.
          </Typography>
          <MemoryList memories={injected.data} label="Injected memories" />
        </SectionCard>
      ) : null}
      {learned.data?.length ? (
        <SectionCard headingId="learned-memories-h" title="Learned from this session">
          <MemoryList memories={learned.data} label="Learned from this session" />
        </SectionCard>
      ) : null}
    </>
  );
}
