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
import type { AuthzActionName } from "@tarsy/contracts";
import { type ReactNode, useEffect, useId, useState } from "react";
import { Outlet, Link as RouterLink } from "react-router";
import { projectsWith } from "../lib/access.ts";
import {
  fetchServedBuild,
  fetchServerVersion,
  fetchUserInfo,
  LOADED_BUILD,
  type UserInfo,
} from "../lib/app-info.ts";
import { useAccess, useConnectionStatus, useLoad, useServices } from "./context.tsx";
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

/**
 * The signed-in user: oauth2-proxy's userinfo when a proxy answers it, else (authorization on)
 * who `/auth/me` says the caller is, with their groups.
 */
function UserMenu() {
  const access = useAccess();
  const [proxyUser, setProxyUser] = useState<UserInfo | null>(null);
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const menuId = useId();
  useEffect(() => {
    void fetchUserInfo().then(setProxyUser);
  }, []);
  const me = access.status === "ready" && access.me.enabled ? access.me : null;
  const user =
    proxyUser ?? (me && me.source !== "none" ? { name: me.user, email: me.email ?? "" } : null);
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
        data-testid="signed-in-user"
        sx={{ textTransform: "none" }}
      >
        {user.name}
      </Button>
      <Menu id={menuId} anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
        <MenuItem disabled sx={{ "&.Mui-disabled": { opacity: 1 } }}>
          <ListItemText
            primary={user.name}
            secondary={
              [user.email, me?.groups.length ? `groups: ${me.groups.join(", ")}` : ""]
                .filter(Boolean)
                .join(" · ") || undefined
            }
          />
        </MenuItem>
        {proxyUser ? (
          <MenuItem component="a" href="/oauth2/sign_out">
            Sign out
          </MenuItem>
        ) : null}
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

/**
 * With authorization off (what `pnpm start` runs) everyone is the one local user: say so on
 * every page. When `/auth/me` cannot be read, say that the page cannot tell what is allowed.
 */
function AccessBanner() {
  const access = useAccess();
  if (access.status === "error") {
    return (
      <Alert severity="warning" square aria-label="Permissions unknown">
        Could not load what you may do ({access.error.message}): cancel, chat and the configuration
        are hidden. Reload to try again.
      </Alert>
    );
  }
  if (access.status !== "ready" || access.me.enabled) return null;
  return (
    <Alert severity="info" square role="status" aria-label="Authorization off">
      Authorization is off: everyone who can reach TARSy acts as the one local user and may do
      everything.
    </Alert>
  );
}

const NAV: {
  to: string;
  label: string;
  match: (p: string) => boolean;
  /** Shown only to a caller who may do this in some project. */
  action?: AuthzActionName;
}[] = [
  { to: "/", label: "Sessions", match: (p: string) => p === "/" || p.startsWith("/sessions") },
  { to: "/triage", label: "Triage", match: (p: string) => p === "/triage" },
  { to: "/actions", label: "Approvals", match: (p: string) => p === "/actions", action: "get" },
  {
    to: "/submit",
    label: "Submit alert",
    match: (p: string) => p === "/submit",
    action: "create",
  },
  { to: "/usage", label: "Usage", match: (p: string) => p === "/usage" },
  { to: "/memories", label: "Memories", match: (p: string) => p === "/memories", action: "get" },
  { to: "/system", label: "System", match: (p: string) => p === "/system" },
];

export function Layout(props: { children?: ReactNode }) {
  const { pathname } = useLocation();
  const access = useAccess();
  // Hidden only once /auth/me says the caller may do it nowhere (the API stays the boundary).
  const nav = NAV.filter(
    (n) => !n.action || access.status !== "ready" || projectsWith(access, n.action).length > 0,
  );
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
            {nav.map((n) => {
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
      <AccessBanner />
      <WarningsBanner />
      <Container component="main" id="main" tabIndex={-1} maxWidth={false} sx={{ py: 2 }}>
        {props.children ?? <Outlet />}
      </Container>
    </>
  );
}
