import type { Command } from "../command.ts";
import { configCheckCommand } from "./config-check.ts";

/** Every `tarsy` command. Add new ones here; the longest matching path wins. */
export const COMMANDS: readonly Command[] = [configCheckCommand];
