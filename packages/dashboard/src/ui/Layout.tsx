import AccountCircle from "@mui/icons-material/AccountCircle";
import DarkMode from "@mui/icons-material/DarkMode";
import LightMode from "@mui/icons-material/LightMode";
import {
  Alert,
  AppBar,
  Box,
  Button,
  Chip,
  Container,
  IconButton,
  ListItemText,
  Menu,
  MenuItem,
  Link as MuiLink,
  Toolbar,
  Tooltip,
  Typography,
} from "@mui/material";
import { useColorScheme } from "@mui/material/styles";
import { type ReactNode, useEffect, useId, useState } from "react";
import { Outlet, Link as RouterLink } from "react-router";
import {
  fetchServedBuild,
  fetchServerVersion,
  fetchUserInfo,
  LOADED_BUILD,
  type UserInfo,
} from "../lib/app-info.ts";
import { useConnectionStatus, useLoad, useServices } from "./context.tsx";
import { useLocation } from "./router.tsx";

const STATUS = {
  connecting: { text: "Connecting…", color: "default" },
  open: { text: "Live", color: "success" },
  reconnecting: { text: "Reconnecting…", color: "warning" },
  closed: { text: "Offline", color: "error" },
} as const;

/** How often the page asks whether a newer dashboard build is served. */
export const BUILD_POLL_MS = 60_000;

function ConnectionIndicator() {
  const status = STATUS[useConnectionStatus()];
  return (
    <Chip
      component="output"
      aria-live="polite"
      data-testid="connection-status"
      size="small"
      variant="outlined"
      color={status.color}
      label={status.text}
    />
  );
}

function ThemeToggle() {
  const { mode, systemMode, setMode } = useColorScheme();
  const current = (mode === "system" ? systemMode : mode) ?? "light";
  const next = current === "dark" ? "light" : "dark";
  const label = `Switch to ${next} theme`;
  return (
    <Tooltip title={label}>
      <IconButton color="inherit" aria-label={label} onClick={() => setMode(next)}>
        {current === "dark" ? <LightMode /> : <DarkMode />}
      </IconButton>
    </Tooltip>
  );
}

function UserMenu() {
  const [user, setUser] = useState<UserInfo | null>(null);
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const menuId = useId();
  useEffect(() => {
    void fetchUserInfo().then(setUser);
  }, []);
  if (!user) return null;
  return (
    <>
      <Button
        color="inherit"
        startIcon={<AccountCircle />}
        aria-haspopup="menu"
        aria-controls={anchor ? menuId : undefined}
        aria-expanded={anchor ? "true" : undefined}
        onClick={(e) => setAnchor(e.currentTarget)}
        sx={{ textTransform: "none" }}
      >
        {user.name}
      </Button>
      <Menu id={menuId} anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
        <MenuItem disabled sx={{ "&.Mui-disabled": { opacity: 1 } }}>
          <ListItemText primary={user.name} secondary={user.email || undefined} />
        </MenuItem>
        <MenuItem component="a" href="/oauth2/sign_out">
          Sign out
        </MenuItem>
      </Menu>
    </>
  );
}

/** The server's version, from /health (absent when it cannot be read). */
function ServerVersion() {
  const [version, setVersion] = useState<string | null>(null);
  useEffect(() => {
    void fetchServerVersion().then(setVersion);
  }, []);
  if (!version) return null;
  return (
    <Typography variant="body2" component="span" data-testid="server-version">
      v{version}
    </Typography>
  );
}

/** Offers a reload once the server serves a build other than the one this page runs. */
function UpdateBanner() {
  const [stale, setStale] = useState(false);
  useEffect(() => {
    if (stale) return;
    const check = () =>
      void fetchServedBuild().then((served) => {
        if (served !== null && served !== LOADED_BUILD) setStale(true);
      });
    const onVisible = () => document.visibilityState === "visible" && check();
    const timer = setInterval(check, BUILD_POLL_MS);
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [stale]);
  if (!stale) return null;
  return (
    <Alert
      severity="info"
      square
      action={
        <Button color="inherit" size="small" onClick={() => window.location.reload()}>
          Reload
        </Button>
      }
    >
      A newer version of TARSy is available — reload
    </Alert>
  );
}

function WarningsBanner() {
  const { api } = useServices();
  const { data, reload } = useLoad(() => api.warnings(), []);
  useEffect(() => {
    const t = setInterval(reload, 30_000);
    return () => clearInterval(t);
  });
  if (!data || data.warnings.length === 0) return null;
  return (
    <Alert severity="warning" square role="alert" aria-label="System warnings">
      {data.warnings.map((w) => (
        <Box key={w.id}>
          <strong>{w.server_id ? `${w.category} · ${w.server_id}` : w.category}:</strong>{" "}
          {w.message}
        </Box>
      ))}
    </Alert>
  );
}

const NAV = [
  { to: "/", label: "Sessions", match: (p: string) => p === "/" || p.startsWith("/sessions") },
  { to: "/submit", label: "Submit alert", match: (p: string) => p === "/submit" },
  { to: "/system", label: "System", match: (p: string) => p === "/system" },
];

export function Layout(props: { children?: ReactNode }) {
  const { pathname } = useLocation();
  return (
    <>
      <MuiLink
        href="#main"
        sx={{
          position: "absolute",
          left: -999,
          "&:focus": { left: 8, top: 8, zIndex: 2000, bgcolor: "background.paper", p: 1 },
        }}
      >
        Skip to content
      </MuiLink>
      <AppBar position="static" color="default" elevation={1}>
        <Toolbar variant="dense" sx={{ gap: 2 }}>
          <Typography component="span" variant="h6" sx={{ fontWeight: 700 }}>
            TARSy
          </Typography>
          <Box component="nav" aria-label="Main" sx={{ display: "flex", gap: 0.5, flexGrow: 1 }}>
            {NAV.map((n) => {
              const active = n.match(pathname);
              return (
                <Button
                  key={n.to}
                  component={RouterLink}
                  to={n.to}
                  color={active ? "primary" : "inherit"}
                  aria-current={active ? "page" : undefined}
                  sx={{ fontWeight: active ? 700 : 400, textTransform: "none" }}
                >
                  {n.label}
                </Button>
              );
            })}
          </Box>
          <ConnectionIndicator />
          <ServerVersion />
          <ThemeToggle />
          <UserMenu />
        </Toolbar>
      </AppBar>
      <UpdateBanner />
      <WarningsBanner />
      <Container component="main" id="main" tabIndex={-1} maxWidth={false} sx={{ py: 2 }}>
        {props.children ?? <Outlet />}
      </Container>
    </>
  );
}
