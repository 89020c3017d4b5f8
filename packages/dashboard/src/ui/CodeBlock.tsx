import Box from "@mui/material/Box";
import { type Theme, useTheme } from "@mui/material/styles";
import { Highlight, type PrismTheme } from "prism-react-renderer";
import { Fragment, memo, useMemo } from "react";
import { CopyButton } from "./CopyButton.tsx";
import { type CodeLanguage, detectLanguage } from "./format.ts";

/** Above this size, text is shown plain: highlighting 100 KB of tokens costs more than it helps. */
const HIGHLIGHT_LIMIT = 20_000;

/**
 * Token colours from the MUI palette (the darker shades on a light background, the main ones on
 * a dark one), so highlighted code keeps its contrast in both themes.
 */
export function prismTheme(theme: Theme): PrismTheme {
  const p = theme.palette;
  const shade = (c: { main: string; dark: string }) => (p.mode === "dark" ? c.main : c.dark);
  return {
    plain: { color: p.text.primary, backgroundColor: "transparent" },
    styles: [
      { types: ["property", "attr-name", "key", "atrule"], style: { color: shade(p.primary) } },
      { types: ["string", "char", "inserted"], style: { color: shade(p.success) } },
      { types: ["number", "boolean", "constant", "null"], style: { color: shade(p.secondary) } },
      { types: ["deleted", "important"], style: { color: shade(p.error) } },
      { types: ["punctuation", "operator", "comment"], style: { color: p.text.secondary } },
    ],
  };
}

/**
 * Highlighted code (prism-react-renderer, a theme matching the MUI palette mode) with a copy
 * button; `label` names the block for screen readers and the copy button.
 */
export const CodeBlock = memo(function CodeBlock(props: {
  code: string;
  language?: CodeLanguage;
  label: string;
  maxHeight?: number;
}) {
  const theme = useTheme();
  const language = props.language ?? detectLanguage(props.code);
  const prism = useMemo(() => prismTheme(theme), [theme]);
  const plain = language === "text" || props.code.length > HIGHLIGHT_LIMIT;
  return (
    <Box
      sx={{
        position: "relative",
        border: 1,
        borderColor: "divider",
        borderRadius: 1,
        bgcolor: "background.paper",
      }}
    >
      <Box sx={{ position: "absolute", top: 2, right: 2, zIndex: 1 }}>
        <CopyButton label={`Copy ${props.label}`} text={() => props.code} />
      </Box>
      <Box
        component="pre"
        role="region"
        aria-label={props.label}
        tabIndex={0}
        sx={{
          m: 0,
          p: 1.5,
          pr: 5,
          overflow: "auto",
          maxHeight: props.maxHeight ?? 480,
          fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
          fontSize: "0.8125rem",
          lineHeight: 1.5,
          whiteSpace: "pre-wrap",
          wordBreak: "break-word",
          color: "text.primary",
        }}
      >
        {plain ? (
          props.code
        ) : (
          <Highlight code={props.code} language={language} theme={prism}>
            {({ tokens, getLineProps, getTokenProps }) =>
              tokens.map((line, i) => (
                // Lines inline with a newline between them: the text copies and reads as written.
                // biome-ignore lint/suspicious/noArrayIndexKey: lines of a fixed text, in order
                <Fragment key={i}>
                  {i > 0 ? "\n" : null}
                  <span className={getLineProps({ line }).className}>
                    {line.map((token, j) => {
                      // An empty line's placeholder "\n": the newline between lines is there.
                      if (token.empty) return null;
                      const { style, ...rest } = getTokenProps({ token });
                      // biome-ignore lint/suspicious/noArrayIndexKey: tokens of a fixed line
                      return <span key={j} {...rest} style={{ color: style?.color }} />;
                    })}
                  </span>
                </Fragment>
              ))
            }
          </Highlight>
        )}
      </Box>
    </Box>
  );
});
