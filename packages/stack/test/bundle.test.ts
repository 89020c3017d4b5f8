import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { serviceBundle } from "../src/bundle.ts";

// Inside the package, so `zod` resolves from its node_modules as a service's packages do.
const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(PACKAGE_DIR, ".bundle-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeService(greeting: string) {
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(
    join(dir, "src/where.ts"),
    "export const where: string = import.meta.url;\nexport const dir: string = import.meta.dirname;\n",
  );
  writeFileSync(
    join(dir, "src/main.ts"),
    [
      'import { z } from "zod";',
      'import { dir, where } from "./where.ts";',
      `const greeting: string = z.string().parse(${JSON.stringify(greeting)});`,
      "console.log(JSON.stringify({ greeting, where, dir }));",
    ].join("\n"),
  );
}

const run = (main: string) =>
  JSON.parse(execFileSync(process.execPath, [main], { encoding: "utf8" })) as {
    greeting: string;
    where: string;
    dir: string;
  };

describe("service bundles", () => {
  it("runs the service's code with plain node; import.meta still names the source file", async () => {
    writeService("hello");
    const main = await serviceBundle(dir);
    expect(main).toBe(join(dir, "dist/main.mjs"));
    expect(run(main)).toEqual({
      greeting: "hello",
      where: pathToFileURL(join(dir, "src/where.ts")).href,
      dir: join(dir, "src"),
    });
  });

  it("is reused while its sources are unchanged, rebuilt once one changed", async () => {
    const main = await serviceBundle(dir);
    const builtAt = statSync(main).mtimeMs;
    expect(statSync(await serviceBundle(dir)).mtimeMs).toBe(builtAt);

    writeService("changed");
    const rebuilt = await serviceBundle(dir);
    expect(statSync(rebuilt).mtimeMs).toBeGreaterThan(builtAt);
    expect(run(rebuilt).greeting).toBe("changed");
  });

  it("loads a dynamically imported module, and the npm packages it imports, only when it runs", async () => {
    // A separate folder: the other tests' service has no lazy part.
    const lazyDir = mkdtempSync(join(PACKAGE_DIR, ".bundle-test-lazy-"));
    try {
      mkdirSync(join(lazyDir, "src"), { recursive: true });
      writeFileSync(
        join(lazyDir, "src/heavy.ts"),
        'import { z } from "zod";\nexport const check = (v: string): string => z.string().parse(v);\n',
      );
      writeFileSync(
        join(lazyDir, "src/main.ts"),
        [
          'if (process.argv[2] === "lazy") {',
          '  const { check } = await import("./heavy.ts");',
          '  console.log(JSON.stringify({ value: check("checked") }));',
          "} else {",
          "  console.log(JSON.stringify({ value: null }));",
          "}",
        ].join("\n"),
      );
      const main = await serviceBundle(lazyDir);
      const text = readFileSync(main, "utf8");
      // zod is imported by the chunk of the lazy module, not by main.mjs.
      expect(text).not.toContain("/zod/");
      const chunks = readdirSync(join(lazyDir, "dist/chunks")).filter((f) => f.endsWith(".mjs"));
      expect(
        chunks.some((f) => readFileSync(join(lazyDir, "dist/chunks", f), "utf8").includes("/zod/")),
      ).toBe(true);
      const out = (...args: string[]) =>
        JSON.parse(execFileSync(process.execPath, [main, ...args], { encoding: "utf8" }));
      expect(out("lazy").value).toBe("checked");
      expect(out().value).toBeNull();
    } finally {
      rmSync(lazyDir, { recursive: true, force: true });
    }
  });

  it("builds once for replicas starting together", async () => {
    writeService("together");
    const [a, b] = [serviceBundle(dir), serviceBundle(dir)];
    expect(a).toBe(b);
    expect(run(await a).greeting).toBe("together");
  });
});
