import { Alert, Button, CssBaseline, LinearProgress, Typography } from "@mui/material";
import { ThemeProvider } from "@mui/material/styles";
import { lazy, Suspense } from "react";
import { Outlet, type RouteObject, useParams, useRouteError } from "react-router";
import { RouterProvider } from "react-router/dom";
import { Layout } from "./Layout.tsx";
import { createAppRouter, useLocation } from "./router.tsx";
import { THEME_STORAGE_KEY, theme } from "./theme.ts";

// Each page is its own chunk, loaded on first visit.
const SessionsPage = lazy(() =>
  import("./SessionsPage.tsx").then((m) => ({ default: m.SessionsPage })),
);
const SessionPage = lazy(() =>
  import("./SessionPage.tsx").then((m) => ({ default: m.SessionPage })),
);
const TracePage = lazy(() => import("./TracePage.tsx").then((m) => ({ default: m.TracePage })));
const SubmitPage = lazy(() => import("./SubmitPage.tsx").then((m) => ({ default: m.SubmitPage })));
const SystemPage = lazy(() => import("./SystemPage.tsx").then((m) => ({ default: m.SystemPage })));
const TriagePage = lazy(() => import("./TriagePage.tsx").then((m) => ({ default: m.TriagePage })));
// The chart library is only in this page's chunk.
const UsagePage = lazy(() => import("./UsagePage.tsx").then((m) => ({ default: m.UsagePage })));
const ApprovalsPage = lazy(() =>
  import("./ApprovalsPage.tsx").then((m) => ({ default: m.ApprovalsPage })),
);
const MemoriesPage = lazy(() =>
  import("./MemoriesPage.tsx").then((m) => ({ default: m.MemoriesPage })),
);

function SessionsRoute() {
  return <SessionsPage search={useLocation().search} />;
}

function SessionRoute() {
  const id = useParams().id ?? "";
  return <SessionPage key={id} sessionId={id} />;
}

function TraceRoute() {
  const id = useParams().id ?? "";
  return <TracePage sessionId={id} search={useLocation().search} />;
}

function TriageRoute() {
  return <TriagePage search={useLocation().search} />;
}

function UsageRoute() {
  return <UsagePage search={useLocation().search} />;
}

function ApprovalsRoute() {
  return <ApprovalsPage search={useLocation().search} />;
}

function MemoriesRoute() {
  return <MemoriesPage search={useLocation().search} />;
}

function PageLoading() {
  return <LinearProgress aria-label="Loading page" />;
}

function Pages() {
  return (
    <Suspense fallback={<PageLoading />}>
      <Outlet />
    </Suspense>
  );
}

function NotFound() {
  const { pathname } = useLocation();
  return (
    <section>
      <Typography variant="h1" gutterBottom>
        Not found
      </Typography>
      <Typography>No page at {pathname}.</Typography>
    </section>
  );
}

/** A page that failed to load (e.g. its chunk is gone after an upgrade) or to render. */
function RouteError() {
  const error = useRouteError();
  return (
    <Alert
      severity="error"
      action={
        <Button color="inherit" onClick={() => window.location.reload()}>
          Reload
        </Button>
      }
    >
      This page could not be shown: {error instanceof Error ? error.message : String(error)}
    </Alert>
  );
}

const routes: RouteObject[] = [
  {
    path: "/",
    Component: Layout,
    children: [
      {
        Component: Pages,
        ErrorBoundary: RouteError,
        children: [
          { index: true, Component: SessionsRoute },
          { path: "sessions", Component: SessionsRoute },
          { path: "sessions/:id", Component: SessionRoute },
          { path: "sessions/:id/trace", Component: TraceRoute },
          { path: "triage", Component: TriageRoute },
          { path: "actions", Component: ApprovalsRoute },
          { path: "submit", Component: SubmitPage },
          { path: "usage", Component: UsageRoute },
          { path: "memories", Component: MemoriesRoute },
          { path: "system", Component: SystemPage },
          { path: "*", Component: NotFound },
        ],
      },
    ],
  },
];

const router = createAppRouter(routes);

export function App() {
  return (
    <ThemeProvider theme={theme} modeStorageKey={THEME_STORAGE_KEY} defaultMode="system">
      <CssBaseline enableColorScheme />
      <RouterProvider router={router} />
    </ThemeProvider>
  );
}
