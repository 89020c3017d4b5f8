#!/usr/bin/env node
// The `tarsy` command: runs the TypeScript entry point through tsx (no build step).
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
