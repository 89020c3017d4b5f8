import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const src = import.meta.dirname;
const manifest = JSON.parse(readFileSync(join(src, "../package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};

/** The core's source files: everything but the `bus/` subpath. */
function coreFiles(): string[] {
  return readdirSync(src, { recursive: true, encoding: "utf8" }).filter(
    (f) => f.endsWith(".ts") && !f.startsWith("bus/"),
  );
}

describe("@tarsy/metrics core", () => {
  it("never imports the bus or the NATS client (llm-service uses it without NATS)", () => {
    const files = coreFiles();
    expect(files).toContain("ops-server.ts");
    for (const file of files) {
      const text = readFileSync(join(src, file), "utf8");
      expect(text, file).not.toMatch(/from "(@tarsy\/bus|@nats-io\/[^"]*)"/);
      expect(text, file).not.toMatch(/from "\.\/bus\//);
    }
  });

  it("depends on neither at run time (the bus is an optional peer of `@tarsy/metrics/bus`)", () => {
    expect(Object.keys(manifest.dependencies)).not.toContain("@tarsy/bus");
    expect(Object.keys(manifest.dependencies).filter((d) => d.startsWith("@nats-io/"))).toEqual([]);
  });
});
