import { describe, expect, it } from "vitest";
import { interpolateString } from "./interpolate.ts";

describe("interpolateString", () => {
  const env = { HOST: "db.internal", PORT: "5432", EMPTY: "" };

  it("replaces TARSy's {{.VAR}} form, with or without spaces", () => {
    expect(interpolateString("{{.HOST}}:{{ .PORT }}", env)).toEqual({
      value: "db.internal:5432",
      missing: [],
    });
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: literal ${VAR} placeholders are the input under test
  it("replaces ${VAR} and uses ${VAR:-default} only when the variable is unset", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: literal ${VAR} placeholders are the input under test
    expect(interpolateString("${HOST}/${NOPE:-fallback}/${EMPTY:-x}", env).value).toBe(
      "db.internal/fallback/",
    );
  });

  it("keeps $$ escapes and lone dollars (regexes, passwords) as they are", () => {
    expect(interpolateString("$${HOST} ^secret.*$ p@ss$word", env).value).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: literal ${VAR} placeholders are the input under test
      "${HOST} ^secret.*$ p@ss$word",
    );
  });

  it("reports every unset variable with its path and leaves it empty", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: literal ${VAR} placeholders are the input under test
    const result = interpolateString("{{.A}}-${B}", env, "mcp_servers.x.transport.url");
    expect(result.value).toBe("-");
    expect(result.missing).toEqual([
      { variable: "A", path: "mcp_servers.x.transport.url", kind: "required", kept: false },
      { variable: "B", path: "mcp_servers.x.transport.url", kind: "required", kept: false },
    ]);
  });
});
