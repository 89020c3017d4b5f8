import DOMPurify from "dompurify";
import { marked } from "marked";
import { useMemo } from "react";

/** Markdown (final analysis, executive summary) rendered by marked and sanitized by DOMPurify. */
export function Markdown(props: { text: string; label?: string }) {
  const html = useMemo(
    () => DOMPurify.sanitize(marked.parse(props.text, { async: false, gfm: true })),
    [props.text],
  );
  return (
    <div
      className="markdown"
      // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by DOMPurify above
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
