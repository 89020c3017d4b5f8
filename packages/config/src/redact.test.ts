import { describe, expect, it } from "vitest";
import { isSecretName, looksSecret, redactArgs, redactHeaders, redactUrl } from "./redact.ts";

describe("config viewer redaction", () => {
  it("hides the value of credential options, spaced or with =, and leaves the rest", () => {
    expect(
      redactArgs([
        "--token",
        "abc",
        "--password=hunter2",
        "--auth-token",
        "t0k",
        "--api-key",
        "k3y",
        "--client-secret=s",
        "--read-only",
        "--namespace",
        "payments",
        "--kubeconfig",
        "/etc/kube/config",
      ]),
    ).toEqual([
      "--token",
      "***",
      "--password=***",
      "--auth-token",
      "***",
      "--api-key",
      "***",
      "--client-secret=***",
      "--read-only",
      "--namespace",
      "payments",
      "--kubeconfig",
      "/etc/kube/config",
    ]);
  });

  it("does not swallow the next option when a credential flag has no value", () => {
    expect(redactArgs(["--token", "--verbose"])).toEqual(["--token", "--verbose"]);
  });

  it("hides NAME=value pairs named like credentials, secret-looking arguments and URL credentials", () => {
    expect(
      redactArgs([
        "GITHUB_TOKEN=ghp_abc",
        "LOG_LEVEL=debug",
        "sk-live-0123",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        "A".repeat(40),
        "https://user:pw@db.example.com/path?key=1",
        "/usr/local/bin/server",
      ]),
    ).toEqual([
      "GITHUB_TOKEN=***",
      "LOG_LEVEL=debug",
      "***",
      "***",
      "***",
      "https://db.example.com/path",
      "/usr/local/bin/server",
    ]);
  });

  it("hides credential headers by name or by value", () => {
    expect(
      redactHeaders({
        Authorization: "Basic dXNlcjpwdw==",
        "X-Api-Key": "k",
        "X-Auth-Token": "t",
        "X-Client-Secret": "s",
        "X-Custom": "Bearer abc",
        "X-Tenant": "payments",
      }),
    ).toEqual({
      Authorization: "***",
      "X-Api-Key": "***",
      "X-Auth-Token": "***",
      "X-Client-Secret": "***",
      "X-Custom": "***",
      "X-Tenant": "payments",
    });
  });

  it("names and values: what counts as secret", () => {
    expect(isSecretName("X-Vault-Token")).toBe(true);
    expect(isSecretName("X-Request-Id")).toBe(false);
    expect(looksSecret("risk-management-tool")).toBe(false); // "sk-" inside a word
    expect(looksSecret("AKIAIOSFODNN7EXAMPLE")).toBe(true);
    expect(redactUrl("https://h.example.com/s/{{.SESSION_ID}}?t=1")).toBe(
      "https://h.example.com/s/{{.SESSION_ID}}",
    );
    expect(redactUrl(undefined)).toBeNull();
  });
});
