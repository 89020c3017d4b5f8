import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";

/**
 * A service's sources as one ES module, `dist/main.mjs` in its folder. Node loads it in about
 * half the time `--import tsx src/main.ts` takes (one file instead of a few hundred, each through
 * a loader hook), and a stack starts all its services at once on a machine of two cores, where
 * that load is most of the time to come up.
 *
 * The bundle holds TARSy's own code only (the service and the workspace packages it imports);
 * everything from npm stays an import of the file the source resolved, so third-party code loads
 * exactly as it does under tsx. It is rebuilt when a source it was built from changed.
 */
export function serviceBundle(serviceDir: string): Promise<string> {
  // Replicas of a service starting together share one build.
  let pending = building.get(serviceDir);
  if (!pending) {
    pending = bundle(serviceDir).finally(() => building.delete(serviceDir));
    building.set(serviceDir, pending);
  }
  return pending;
}

const building = new Map<string, Promise<string>>();

async function bundle(serviceDir: string): Promise<string> {
  const out = join(serviceDir, "dist", "main.mjs");
  const inputsFile = join(serviceDir, "dist", "main.inputs.json");
  if (isFresh(out, inputsFile)) return out;
  // Built beside the target and renamed over it, so a stack starting in another process never
  // reads half a file.
  const staging = join(serviceDir, "dist", `.build-${process.pid}-${Date.now()}`);
  mkdirSync(staging, { recursive: true });
  try {
    const result = await build({
      absWorkingDir: serviceDir,
      entryPoints: { main: "src/main.ts" },
      outdir: staging,
      outExtension: { ".js": ".mjs" },
      // A dynamic `import()` becomes a chunk of its own, loaded (with the npm packages it
      // imports) only when that code runs: a CLI command that starts MCP servers does not make
      // every other command load the MCP SDK, Prisma and the gateway.
      splitting: true,
      chunkNames: "chunks/[name]-[hash]",
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      sourcemap: "linked",
      metafile: true,
      logLevel: "silent",
      plugins: [npmStaysExternal, sourceLocations],
    });
    const inputs = Object.keys(result.metafile.inputs).map((input) => join(serviceDir, input));
    writeFileSync(join(staging, "main.inputs.json"), JSON.stringify(inputs));
    // Chunks first, named by their content: a process still running an older main.mjs keeps
    // finding the chunks it names.
    const chunks = join(staging, "chunks");
    if (existsSync(chunks)) {
      mkdirSync(join(serviceDir, "dist", "chunks"), { recursive: true });
      for (const name of readdirSync(chunks)) {
        renameSync(join(chunks, name), join(serviceDir, "dist", "chunks", name));
      }
    }
    renameSync(join(staging, "main.mjs.map"), `${out}.map`);
    renameSync(join(staging, "main.inputs.json"), inputsFile);
    renameSync(join(staging, "main.mjs"), out);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return out;
}

/** The bundle exists and is newer than every source it was built from. */
function isFresh(out: string, inputsFile: string): boolean {
  try {
    const builtAt = statSync(out).mtimeMs;
    const inputs = JSON.parse(readFileSync(inputsFile, "utf8")) as string[];
    return inputs.every((input) => statSync(input).mtimeMs < builtAt);
  } catch {
    return false;
  }
}

/** Packages from npm are imported from where the source found them, by absolute path. */
const npmStaysExternal: Plugin = {
  name: "npm-stays-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith("@tarsy/") || args.pluginData?.resolving) return undefined;
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      const found = await b.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        importer: args.importer,
        pluginData: { resolving: true },
      });
      if (found.errors.length > 0 || !found.path.startsWith("/")) {
        return { path: args.path, external: true };
      }
      return { path: found.path, external: true };
    });
  },
};

/**
 * `import.meta.url` and `import.meta.dirname` keep meaning the source file they are written in
 * (the LLM client finds its proto files and the database its migrations that way), not the
 * bundle they end up in.
 */
const sourceLocations: Plugin = {
  name: "source-locations",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      const source = readFileSync(args.path, "utf8");
      if (!source.includes("import.meta.")) return undefined;
      const contents = source
        .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll("import.meta.dirname", JSON.stringify(dirname(args.path)))
        .replaceAll("import.meta.filename", JSON.stringify(args.path));
      return { contents, loader: "ts", resolveDir: dirname(args.path) };
    });
  },
};
