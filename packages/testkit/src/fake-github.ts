import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for GitHub: raw file content (`/{owner}/{repo}/{ref}/{path}`, and the
 * `/blob/` web URL) and the contents API (`/repos/{owner}/{repo}/contents/{path}?ref=`), built
 * on node:http. Files are keyed `owner/repo/ref/path` and may be changed while it runs.
 */
export interface FakeGithub {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly files: Map<string, string>;
  /** Directories (`owner/repo/ref/dir`) whose contents API answers 500. */
  readonly failingDirs: Set<string>;
  /** Paths answered with a 302 to the given location. */
  readonly redirects: Map<string, string>;
  /** Paths that never answer (timeouts). */
  readonly hanging: Set<string>;
  /** Every request: path (with query) and its Authorization header. */
  readonly requests: { path: string; authorization: string | undefined }[];
  /** Requests for one path (without query). */
  hits(path: string): number;
  close(): Promise<void>;
}

function listDir(fake: FakeGithub, owner: string, repo: string, ref: string, dir: string) {
  const prefix = `${owner}/${repo}/${ref}/${dir ? `${dir}/` : ""}`;
  const entries = new Map<string, { type: "file" | "dir"; path: string }>();
  for (const key of fake.files.keys()) {
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length);
    const [name, ...deeper] = rest.split("/");
    if (!name) continue;
    const path = dir ? `${dir}/${name}` : name;
    entries.set(name, { type: deeper.length > 0 ? "dir" : "file", path });
  }
  return [...entries].map(([name, e]) => ({
    type: e.type,
    name,
    path: e.path,
    html_url: `${fake.url}/${owner}/${repo}/${e.type === "dir" ? "tree" : "blob"}/${ref}/${e.path}`,
  }));
}

function handle(fake: FakeGithub, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", fake.url);
  fake.requests.push({ path: url.pathname + url.search, authorization: req.headers.authorization });
  if (fake.hanging.has(url.pathname)) return;
  const redirect = fake.redirects.get(url.pathname);
  if (redirect) {
    res.writeHead(302, { location: redirect }).end();
    return;
  }
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "repos" && parts[3] === "contents") {
    const [, owner = "", repo = "", , ...dirParts] = parts;
    const ref = url.searchParams.get("ref") ?? "main";
    const dir = dirParts.join("/");
    if (fake.failingDirs.has(`${owner}/${repo}/${ref}/${dir}`)) {
      res.writeHead(500, { "content-type": "application/json" }).end('{"message":"boom"}');
      return;
    }
    const items = listDir(fake, owner, repo, ref, dir);
    if (items.length === 0) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"message":"Not Found"}');
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(items));
    return;
  }
  // /{owner}/{repo}/blob/{ref}/{path} or /{owner}/{repo}/{ref}/{path}
  const [owner, repo, ...rest] = parts;
  const key = rest[0] === "blob" ? `${owner}/${repo}/${rest.slice(1).join("/")}` : parts.join("/");
  const content = fake.files.get(key);
  if (content === undefined) {
    res.writeHead(404, { "content-type": "text/plain" }).end("404: Not Found");
    return;
  }
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(content);
}

export async function startFakeGithub(files: Record<string, string> = {}): Promise<FakeGithub> {
  const server = createServer((req, res) => handle(fake, req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const requests: FakeGithub["requests"] = [];
  const fake: FakeGithub = {
    url: `http://127.0.0.1:${port}`,
    files: new Map(Object.entries(files)),
    failingDirs: new Set(),
    redirects: new Map(),
    hanging: new Set(),
    requests,
    hits: (path) => requests.filter((r) => r.path.split("?")[0] === path).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
