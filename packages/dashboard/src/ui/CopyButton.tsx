import CheckIcon from "@mui/icons-material/Check";
import ContentCopyIcon from "@mui/icons-material/ContentCopy";
import LinkIcon from "@mui/icons-material/Link";
import IconButton from "@mui/material/IconButton";
import Tooltip from "@mui/material/Tooltip";
import { type MouseEvent, useEffect, useState } from "react";

/** Puts text on the clipboard; resolves false where the browser refuses. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A small icon button that copies `text()` (computed on click, so a 100 KB body is only read
 * when asked for) and says "Copied" in its tooltip for a moment.
 */
export function CopyButton(props: {
  label: string;
  text: () => string;
  icon?: "copy" | "link";
  onCopied?: () => void;
}) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 1500);
    return () => clearTimeout(t);
  }, [state]);
  const onClick = (e: MouseEvent) => {
    // Inside an accordion summary: copy, do not toggle.
    e.stopPropagation();
    copyText(props.text()).then((ok) => {
      setState(ok ? "copied" : "failed");
      if (ok) props.onCopied?.();
    });
  };
  const title = state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : props.label;
  const Icon = state === "copied" ? CheckIcon : props.icon === "link" ? LinkIcon : ContentCopyIcon;
  return (
    <Tooltip title={title}>
      <IconButton size="small" aria-label={props.label} onClick={onClick}>
        <Icon fontSize="inherit" />
      </IconButton>
    </Tooltip>
  );
}
