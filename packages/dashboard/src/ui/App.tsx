import type { ReactElement } from "react";
import { Layout } from "./Layout.tsx";
import { useLocation } from "./router.tsx";
import { SessionPage } from "./SessionPage.tsx";
import { SessionsPage } from "./SessionsPage.tsx";
import { SubmitPage } from "./SubmitPage.tsx";
import { SystemPage } from "./SystemPage.tsx";
import { TracePage } from "./TracePage.tsx";

export function App() {
  const { pathname, search } = useLocation();
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  let page: ReactElement;
  if (parts.length === 0 || (parts[0] === "sessions" && parts.length === 1)) {
    page = <SessionsPage search={search} />;
  } else if (parts[0] === "sessions" && parts[1] && parts[2] === "trace") {
    page = <TracePage sessionId={parts[1]} search={search} />;
  } else if (parts[0] === "sessions" && parts[1]) {
    page = <SessionPage key={parts[1]} sessionId={parts[1]} />;
  } else if (parts[0] === "submit") {
    page = <SubmitPage />;
  } else if (parts[0] === "system") {
    page = <SystemPage />;
  } else {
    page = (
      <section>
        <h1>Not found</h1>
        <p>No page at {pathname}.</p>
      </section>
    );
  }
  return <Layout pathname={pathname}>{page}</Layout>;
}
