import type { ReactNode } from "react";
import {
  createBrowserRouter,
  type RouteObject,
  Link as RouterLink,
  useLocation as useRouterLocation,
} from "react-router";

/**
 * The app's react-router instance and thin wrappers over it, with the call signatures the pages
 * have always used: `Link`, `navigate` (usable outside React) and `useLocation`.
 */
type AppRouter = ReturnType<typeof createBrowserRouter>;
let router: AppRouter | null = null;

/** Creates the browser router; `navigate` goes through it from then on. */
export function createAppRouter(routes: RouteObject[]): AppRouter {
  router = createBrowserRouter(routes);
  return router;
}

export function navigate(to: string, replace = false): void {
  if (!router) throw new Error("navigate before the router exists");
  void router.navigate(to, { replace });
}

export function useLocation(): { pathname: string; search: string } {
  const { pathname, search } = useRouterLocation();
  return { pathname, search };
}

export function Link(props: { to: string; children: ReactNode; className?: string }) {
  return (
    <RouterLink to={props.to} className={props.className}>
      {props.children}
    </RouterLink>
  );
}
