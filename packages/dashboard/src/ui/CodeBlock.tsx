import Box from "@mui/material/Box";
import { Highlight, type PrismTheme } from "prism-react-renderer";
import { Fragment, memo } from "react";
import { CopyButton } from "./CopyButton.tsx";
import { type CodeLanguage, detectLanguage } from "./format.ts";

/** Above this size, text is shown plain: highlighting 100 KB of tokens costs more than it helps. */
const HIGHLIGHT_LIMIT = 20_000;

/**
 * Token colours as CSS variables (styles.css sets them for each color scheme, AA on the code
 * background), so highlighted code follows the theme without re-rendering.
 */
export const PRISM_THEME: PrismTheme = {
  plain: { color: "var(--mui-palette-text-primary)", backgroundColor: "transparent" },
  styles: [
    { types: ["property", "attr-name", "key", "atrule"], style: { color: "var(--code-key)" } },
    { types: ["string", "char", "inserted"], style: { color: "var(--code-string)" } },
    { types: ["number", "boolean", "constant", "null"], style: { color: "var(--code-number)" } },
    { types: ["deleted", "important"], style: { color: "var(--code-deleted)" } },
    {
      types: ["punctuation", "operator", "comment"],
      style: { color: "var(--mui-palette-text-secondary)" },
    },
  ],
};

/**
 * Highlighted code (prism-react-renderer, colours following the theme) with a copy
 * button; `label` names the block for screen readers and the copy button.
 */
export const CodeBlock = memo(function CodeBlock(props: {
  code: string;
  language?: CodeLanguage;
  label: string;
  maxHeight?: number;
}) {
  const language = props.language ?? detectLanguage(props.code);
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
          <Highlight code={props.code} language={language} theme={PRISM_THEME}>
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
