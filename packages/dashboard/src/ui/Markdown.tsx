import Box from "@mui/material/Box";
import { marked } from "marked";
import { memo, useMemo } from "react";
import { markdownToHtml } from "./markdown-html.ts";

const markdownSx = {
  overflowWrap: "anywhere",
  "& > :first-of-type": { mt: 0 },
  "& > :last-child": { mb: 0 },
  "& h1, & h2, & h3, & h4": { mt: 2, mb: 1, lineHeight: 1.3 },
  "& h1": { fontSize: "1.35rem" },
  "& h2": { fontSize: "1.2rem" },
  "& h3, & h4": { fontSize: "1.05rem" },
  "& p, & ul, & ol": { my: 1 },
  "& code": {
    fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
    fontSize: "0.85em",
    bgcolor: "action.hover",
    borderRadius: 0.5,
    px: 0.5,
  },
  "& pre": { p: 1.5, overflow: "auto", bgcolor: "action.hover", borderRadius: 1 },
  "& pre code": { bgcolor: "transparent", p: 0 },
  "& a": { color: "primary.main" },
  // What markdown-html.ts adds: a link's real host, an external image's placeholder.
  "& .link-target, & .external-removed": { color: "text.secondary", fontSize: "0.85em" },
  "& table": { borderCollapse: "collapse" },
  "& th, & td": { border: 1, borderColor: "divider", px: 1, py: 0.5 },
} as const;

/** One block of markdown; memoised, so a finished block is not parsed again. */
const Block = memo(function Block(props: { text: string }) {
  const html = useMemo(() => markdownToHtml(props.text), [props.text]);
  // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by DOMPurify (markdown-html.ts)
  return <div style={{ display: "contents" }} dangerouslySetInnerHTML={{ __html: html }} />;
});

/**
 * Markdown (responses, final analysis, executive summary) rendered by marked and sanitized by
 * DOMPurify, external images dropped and link targets shown (`markdown-html.ts`), one
 * top-level block at a time: each block is memoised, so while the text streams only the last,
 * growing block renders again per chunk, and when the stream ends the finished text keeps the
 * nodes it was shown in (no flicker, no re-parse of what is done).
 */
export function Markdown(props: { text: string }) {
  const blocks = useMemo(
    () => marked.lexer(props.text, { gfm: true }).map((t) => t.raw),
    [props.text],
  );
  return (
    <Box className="markdown" sx={markdownSx}>
      {blocks.map((raw, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: blocks only grow at the end
        <Block key={i} text={raw} />
      ))}
    </Box>
  );
}
