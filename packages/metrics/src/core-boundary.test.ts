import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const src = import.meta.dirname;
const manifest = JSON.parse(readFileSync(join(src, "../package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
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

  it("depends on neither at run time: an image holds only `dependencies` (deploy/docker/install-prod.sh)", () => {
    const runtime = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
    expect(runtime).not.toContain("@tarsy/bus");
    expect(runtime.filter((d) => d.startsWith("@nats-io/"))).toEqual([]);
  });

  it("takes only types from the bus in `@tarsy/metrics/bus` (its importers bring the bus itself)", () => {
    const files = readdirSync(join(src, "bus")).filter((f) => f.endsWith(".ts"));
    expect(files).toContain("observer.ts");
    for (const file of files) {
      const text = readFileSync(join(src, "bus", file), "utf8");
      // An import statement (single- or multi-line) of the bus that is not `import type`.
      expect(text, file).not.toMatch(/\bimport\s+(?!type\s)[^;]*from "@tarsy\/bus"/);
      expect(text, file).not.toMatch(/from "@nats-io\//);
    }
  });
});
