import { randomBytes } from "node:crypto";
import { type McpReplicaRef, mcpReplicaSubjectPrefix } from "@tarsy/contracts";

/** A subject-safe id for this replica (given, or random). */
export function replicaRef(id: string = randomBytes(6).toString("hex")): McpReplicaRef {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`replica id "${id}" must be one subject token`);
  return { id, subject_prefix: mcpReplicaSubjectPrefix(id) };
}
