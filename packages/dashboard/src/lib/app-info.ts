import { z } from "zod";

/**
 * What the app bar shows beside the pages: the signed-in user (oauth2-proxy's userinfo, when a
 * proxy is in front), the server's version and the id of the dashboard build being served.
 */

/** oauth2-proxy's `/oauth2/userinfo` body: `user` or `preferredUsername`, and `email`. */
export const UserInfoSchema = z
  .object({
    user: z.string().optional(),
    preferredUsername: z.string().optional(),
    email: z.string().optional(),
  })
  .transform((u) => ({
    name: u.preferredUsername || u.user || u.email || "",
    email: u.email ?? "",
  }))
  .refine((u) => u.name !== "");
export type UserInfo = z.infer<typeof UserInfoSchema>;

/** `version.json`, written beside index.html by every build (see vite.config.ts). */
export const BuildInfoSchema = z.object({ build: z.string().min(1) });

const HealthVersionSchema = z.object({ version: z.string().min(1) });

async function getJson<S extends z.ZodType>(
  schema: S,
  path: string,
  fetchImpl: typeof fetch,
  acceptStatus: (status: number) => boolean = (s) => s === 200,
): Promise<z.infer<S> | null> {
  try {
    const res = await fetchImpl(path, {
      headers: { accept: "application/json" },
      cache: "no-store",
    });
    if (!acceptStatus(res.status)) return null;
    const parsed = schema.safeParse(await res.json());
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The proxy's user, or null when no proxy answers (the menu is then hidden). */
export function fetchUserInfo(fetchImpl: typeof fetch = fetch): Promise<UserInfo | null> {
  return getJson(UserInfoSchema, "/oauth2/userinfo", fetchImpl);
}

/** The server's version from `/health` (a degraded system answers 503 with the same body). */
export async function fetchServerVersion(fetchImpl: typeof fetch = fetch): Promise<string | null> {
  const body = await getJson(
    HealthVersionSchema,
    "/health",
    fetchImpl,
    (s) => s === 200 || s === 503,
  );
  return body?.version ?? null;
}

/** The id of the build the server serves now, or null when it has none (dev server). */
export async function fetchServedBuild(fetchImpl: typeof fetch = fetch): Promise<string | null> {
  const body = await getJson(BuildInfoSchema, "/version.json", fetchImpl);
  return body?.build ?? null;
}

/** The id of the build this page was loaded from (set by vite.config.ts at build time). */
export const LOADED_BUILD: string = typeof __TARSY_BUILD__ === "string" ? __TARSY_BUILD__ : "dev";
