import { describe, expect, it } from "vitest";
import { z } from "zod";
import { EnvError, parseEnv, ServiceEnvShape } from "./env.ts";

const Schema = z.object({ ...ServiceEnvShape, PORT: z.coerce.number().int().default(8080) });

describe("ServiceEnvShape", () => {
  it("defaults LOG_LEVEL to info and SHUTDOWN_TIMEOUT_MS to 30 s", () => {
    expect(parseEnv(Schema, {})).toEqual({
      LOG_LEVEL: "info",
      SHUTDOWN_TIMEOUT_MS: 30_000,
      PORT: 8080,
    });
    expect(parseEnv(Schema, { LOG_LEVEL: "silent", SHUTDOWN_TIMEOUT_MS: "500" })).toMatchObject({
      LOG_LEVEL: "silent",
      SHUTDOWN_TIMEOUT_MS: 500,
    });
  });

  it("fails naming every bad variable at once", () => {
    const parse = () => parseEnv(Schema, { LOG_LEVEL: "loud", SHUTDOWN_TIMEOUT_MS: "-1" });
    expect(parse).toThrow(EnvError);
    expect(parse).toThrow(/LOG_LEVEL: .*\n\s+SHUTDOWN_TIMEOUT_MS: /);
  });
});
