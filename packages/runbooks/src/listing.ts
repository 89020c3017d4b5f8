import { z } from "zod";
import type { RepoLocation } from "./url.ts";

/** The `.md` files of a repository directory, from a recursive walk of GitHub's contents API. */

const ContentsItemSchema = z.looseObject({
  type: z.string(),
  name: z.string(),
  path: z.string(),
  html_url: z.string().nullish(),
});
const ContentsSchema = z.union([z.array(ContentsItemSchema), ContentsItemSchema]);
type ContentsItem = z.infer<typeof ContentsItemSchema>;

/** Directories deeper than this are not walked (a runbook tree is shallow). */
const MAX_DEPTH = 8;
/** At most this many runbooks are listed. */
const MAX_FILES = 2000;

export interface ListingDeps {
  apiUrl: string;
  /** GET returning the body text (throws on any failure). */
  get(url: string): Promise<string>;
  /** A subdirectory that could not be read: skipped, reported here. */
  onSkipped?(path: string, err: unknown): void;
}

function contentsUrl(apiUrl: string, loc: RepoLocation, path: string): string {
  const base = apiUrl.replace(/\/+$/, "");
  const encodedPath = path
    .split("/")
    .filter(Boolean)
    .map((p) => encodeURIComponent(p))
    .join("/");
  const url = new URL(
    `${base}/repos/${encodeURIComponent(loc.owner)}/${encodeURIComponent(loc.repo)}/contents/${encodedPath}`,
  );
  if (loc.ref) url.searchParams.set("ref", loc.ref);
  return url.href;
}

/** The web (blob) URL of a file: what a user would open and submit. */
function blobUrl(loc: RepoLocation, item: ContentsItem): string {
  if (item.html_url && URL.canParse(item.html_url)) return item.html_url;
  const path = item.path.split("/").map(encodeURIComponent).join("/");
  return `https://github.com/${loc.owner}/${loc.repo}/blob/${loc.ref ?? "HEAD"}/${path}`;
}

async function readDir(deps: ListingDeps, loc: RepoLocation, path: string) {
  const text = await deps.get(contentsUrl(deps.apiUrl, loc, path));
  const parsed = ContentsSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`unexpected contents API answer for "${path}"`);
  return Array.isArray(parsed.data) ? parsed.data : [parsed.data];
}

export async function listMarkdownFiles(deps: ListingDeps, loc: RepoLocation): Promise<string[]> {
  const found: string[] = [];
  const walk = async (items: ContentsItem[], depth: number): Promise<void> => {
    const dirs: ContentsItem[] = [];
    for (const item of items) {
      if (item.type === "file" && item.name.toLowerCase().endsWith(".md")) {
        if (found.length < MAX_FILES) found.push(blobUrl(loc, item));
      } else if (item.type === "dir" && depth < MAX_DEPTH) {
        dirs.push(item);
      }
    }
    await Promise.all(
      dirs.map(async (dir) => {
        let children: ContentsItem[];
        try {
          children = await readDir(deps, loc, dir.path);
        } catch (err) {
          deps.onSkipped?.(dir.path, err);
          return;
        }
        await walk(children, depth + 1);
      }),
    );
  };
  // The top directory must be readable; a failing subdirectory only loses its own files.
  await walk(await readDir(deps, loc, loc.path), 0);
  return found.sort();
}
