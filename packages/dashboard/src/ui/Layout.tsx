import { type ReactNode, useEffect, useState } from "react";
import { useConnectionStatus, useLoad, useServices } from "./context.tsx";
import { Link } from "./router.tsx";

const STATUS_TEXT = {
  connecting: "Connecting…",
  open: "Live",
  reconnecting: "Reconnecting…",
  closed: "Offline",
} as const;

function ConnectionIndicator() {
  const status = useConnectionStatus();
  return (
    <output className={`conn conn-${status}`} aria-live="polite" data-testid="connection-status">
      <span className="dot" aria-hidden="true" />
      {STATUS_TEXT[status]}
    </output>
  );
}

type Theme = "light" | "dark";
function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(() => {
    const saved = localStorage.getItem("tarsy.theme");
    if (saved === "light" || saved === "dark") return saved;
    return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  });
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem("tarsy.theme", theme);
  }, [theme]);
  const next = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      className="ghost"
      onClick={() => setTheme(next)}
      aria-label={`Switch to ${next} theme`}
    >
      {theme === "dark" ? "☀ Light" : "☾ Dark"}
    </button>
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
    <div className="banner" role="alert" aria-label="System warnings">
      {data.warnings.map((w) => (
        <p key={w.id}>
          <strong>{w.server_id ? `${w.category} · ${w.server_id}` : w.category}:</strong>{" "}
          {w.message}
        </p>
      ))}
    </div>
  );
}

export function Layout(props: { pathname: string; children: ReactNode }) {
  const nav = [
    {
      to: "/",
      label: "Sessions",
      active: props.pathname === "/" || props.pathname === "/sessions",
    },
    { to: "/submit", label: "Submit alert", active: props.pathname === "/submit" },
    { to: "/system", label: "System", active: props.pathname === "/system" },
  ];
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">TARSy</span>
        <nav aria-label="Main">
          <ul>
            {nav.map((n) => (
              <li key={n.to} aria-current={n.active ? "page" : undefined}>
                <Link to={n.to}>{n.label}</Link>
              </li>
            ))}
          </ul>
        </nav>
        <ConnectionIndicator />
        <ThemeToggle />
      </header>
      <WarningsBanner />
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
