import { Card, CardContent, CardHeader, type CardProps, Stack, Typography } from "@mui/material";
import type { ReactNode } from "react";

/**
 * A titled section of the session page: an outlined card named by its h2 heading, with chips
 * beside the heading, actions on the right, and its content. Other Card props (test ids, data
 * attributes) go on the card; `after` is rendered inside the card, after its content (dialogs).
 */
export function SectionCard(
  props: {
    headingId: string;
    title: string;
    chips?: ReactNode;
    action?: ReactNode;
    after?: ReactNode;
    children: ReactNode;
  } & Omit<CardProps, "title" | "children" | "action">,
) {
  const { headingId, title, chips, action, after, children, ...card } = props;
  const heading = (
    <Typography variant="h6" component="h2" id={headingId}>
      {title}
    </Typography>
  );
  return (
    <Card
      variant="outlined"
      component="section"
      aria-labelledby={headingId}
      sx={{ mt: 3 }}
      {...card}
    >
      <CardHeader
        disableTypography
        sx={{ pb: 0 }}
        title={
          chips ? (
            <Stack direction="row" spacing={1} sx={{ alignItems: "center" }}>
              {heading}
              {chips}
            </Stack>
          ) : (
            heading
          )
        }
        action={action}
      />
      <CardContent>{children}</CardContent>
      {after}
    </Card>
  );
}
