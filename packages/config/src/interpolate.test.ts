import { describe, expect, it } from "vitest";
import { fillSessionId, interpolateString } from "./interpolate.ts";

describe("interpolateString", () => {
  const env = { HOST: "db.internal", PORT: "5432", EMPTY: "" };

  it("replaces TARSy's {{.VAR}} form, with or without spaces", () => {
    expect(interpolateString("{{.HOST}}:{{ .PORT }}", env)).toEqual({
      value: "db.internal:5432",
      missing: [],
    });
  });

  it("keeps the shell form, its $$ escape and lone dollars (regexes, passwords) as they are", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: literal ${VAR} placeholders are the input under test
    const text = "${HOST} ${NOPE:-x} $${HOST} ^secret.*$ p@ss$word user_${USER_ID}_.*";
    expect(interpolateString(text, env)).toEqual({ value: text, missing: [] });
  });

  it("reports every unset variable with its path and leaves it empty", () => {
    const result = interpolateString("{{.A}}-{{.B}}{{.EMPTY}}", env, "mcp_servers.x.transport.url");
    expect(result.value).toBe("-");
    expect(result.missing).toEqual([
      { variable: "A", path: "mcp_servers.x.transport.url" },
      { variable: "B", path: "mcp_servers.x.transport.url" },
    ]);
  });

  it("keeps {{.SESSION_ID}} only where asked, and fills it per execution later", () => {
    const withEnv = { SESSION_ID: "env" };
    expect(interpolateString("{{ .SESSION_ID }}", withEnv).value).toBe("env");
    const kept = interpolateString("/s/{{ .SESSION_ID }}", withEnv, "", { keepSessionId: true });
    expect(kept.value).toBe("/s/{{.SESSION_ID}}");
    expect(fillSessionId(kept.value, "exec-1")).toBe("/s/exec-1");
    expect(fillSessionId(kept.value, undefined)).toBe("/s/");
  });
});
