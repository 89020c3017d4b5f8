import { createTheme } from "@mui/material/styles";

/** localStorage key of the chosen mode ("light", "dark" or "system"). */
export const THEME_STORAGE_KEY = "tarsy.theme";

/**
 * The dashboard's MUI theme: light and dark color schemes as CSS variables, switched by the
 * `data-theme` attribute on <html> (which styles.css follows too). The mode follows the OS
 * until the user picks one in the app bar; the choice is kept in localStorage.
 * Colors are chosen for contrast at 3 a.m.: AA on both backgrounds.
 */
export const theme = createTheme({
  cssVariables: { colorSchemeSelector: "data-theme" },
  colorSchemes: {
    light: {
      palette: {
        primary: { main: "#1f5fbf" },
        background: { default: "#f7f8fa", paper: "#ffffff" },
        success: { main: "#1e7a3c" },
        error: { main: "#b3261e" },
        warning: { main: "#8a5a00" },
        info: { main: "#0b6aa2" },
      },
    },
    dark: {
      palette: {
        primary: { main: "#7fb0ff" },
        background: { default: "#12151a", paper: "#1b1f26" },
        success: { main: "#7ddc9b" },
        error: { main: "#ff8a80" },
        warning: { main: "#ffcc66" },
        info: { main: "#7cc7ff" },
      },
    },
  },
  typography: {
    fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    h1: { fontSize: "1.6rem", fontWeight: 600 },
    h2: { fontSize: "1.2rem", fontWeight: 600 },
    h3: { fontSize: "1.05rem", fontWeight: 600 },
  },
  shape: { borderRadius: 8 },
  // MUI's own keyboard focus ring on its controls (buttons, tabs, checkboxes, accordions…),
  // drawn like the ring styles.css gives everything else.
  focusVisible: { outlineColor: "var(--focus)", outlineWidth: 3 },
  components: {
    MuiTooltip: { defaultProps: { arrow: true } },
    // A text field or select shows the ring on its frame (MUI resets the native input's outline).
    MuiInputBase: {
      styleOverrides: {
        root: { "&:has(:focus-visible)": { outline: "3px solid var(--focus)", outlineOffset: 2 } },
      },
    },
  },
});
