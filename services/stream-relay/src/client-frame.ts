import { type WsClientAction, WsClientActionSchema } from "@tarsy/contracts";
import type { RawData } from "ws";

/** A parsed client frame: an action to run, or the error frame it is answered with. */
export type ParsedClientFrame =
  | { ok: true; action: WsClientAction }
  | { ok: false; code: string; message: string };

/** Parses one client frame: JSON text holding one of the protocol's actions. */
export function parseClientFrame(data: RawData, isBinary: boolean): ParsedClientFrame {
  if (isBinary) {
    return { ok: false, code: "invalid_frame", message: "binary frames are not supported" };
  }
  let json: unknown;
  try {
    json = JSON.parse(data.toString());
  } catch {
    return { ok: false, code: "invalid_json", message: "frame is not valid JSON" };
  }
  const result = WsClientActionSchema.safeParse(json);
  if (result.success) return { ok: true, action: result.data };
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  return {
    ok: false,
    code: "invalid_action",
    message: `${where}${issue?.message ?? "invalid action"}`,
  };
}
