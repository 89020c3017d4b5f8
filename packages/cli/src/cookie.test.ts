import { describe, expect, it } from "vitest";
import { parseCookieFile } from "./cookie.ts";

describe("parseCookieFile", () => {
  it("takes the cookie as copied from a browser, with or without a trailing newline", () => {
    expect(parseCookieFile("_oauth2_proxy=abc.DEF-123=\n")).toBe("_oauth2_proxy=abc.DEF-123=");
    expect(parseCookieFile("_oauth2_proxy_0=a; _oauth2_proxy_1=b")).toBe(
      "_oauth2_proxy_0=a; _oauth2_proxy_1=b",
    );
  });

  it("takes every cookie of a Netscape cookie jar, HttpOnly ones included", () => {
    const jar = [
      "# Netscape HTTP Cookie File",
      "",
      "#HttpOnly_tarsy.example.com\tFALSE\t/\tTRUE\t1893456000\t_oauth2_proxy\tS3cr3t|x=",
      "tarsy.example.com\tFALSE\t/\tTRUE\t0\tcsrf\tz",
    ].join("\n");
    expect(parseCookieFile(jar)).toBe("_oauth2_proxy=S3cr3t|x=; csrf=z");
  });

  it("refuses a file without a cookie or with something else in it", () => {
    expect(() => parseCookieFile("# only a comment\n\n")).toThrow("holds no cookie");
    expect(() => parseCookieFile("Bearer abc")).toThrow("not a name=value cookie");
  });
});
