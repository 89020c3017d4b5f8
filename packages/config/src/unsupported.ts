/**
 * Keys the Go TARSy's configuration accepts that this implementation does not act on yet.
 * They load without error; `tarsy config check` lists each use with what it does there and
 * the issue that brings it (`--strict` fails on any). Remove a row when its feature lands.
 *
 * `path` matches where the key appears: `*` is one name (a chain, an agent, a server),
 * `[]` any list index.
 */
export interface UnsupportedKey {
  path: string;
  /** What the key does in the Go TARSy. */
  does: string;
  /** Our issue that will bring it. */
  issue: number;
}

export const UNSUPPORTED_KEYS: readonly UnsupportedKey[] = [
  {
    path: "agents.*.agent_timeout",
    does: "caps an agent's (or sub-agent's) time budget",
    issue: 31,
  },
  {
    path: "mcp_servers.*.transport.sse_read_timeout",
    does: "read timeout of an SSE stream (older TARSy)",
    issue: 23,
  },
  {
    path: "mcp_servers.*.transport.disable_ssl_verification",
    does: "older TARSy name of verify_ssl: false",
    issue: 23,
  },
];

function toRegExp(pattern: string): RegExp {
  const body = pattern
    .split(/(\*|\[\])/)
    .map((part) => {
      if (part === "*") return "[^.\\[]+";
      if (part === "[]") return "\\[\\d+\\]";
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("");
  return new RegExp(`^${body}$`);
}

const MATCHERS = UNSUPPORTED_KEYS.map((key) => ({ key, re: toRegExp(key.path) }));

/** The table's row for a key found at `path` (e.g. `agent_chains.k8s.scoring`), if any. */
export function unsupportedKeyAt(path: string): UnsupportedKey | undefined {
  return MATCHERS.find((m) => m.re.test(path))?.key;
}
