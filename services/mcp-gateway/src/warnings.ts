import { randomUUID } from "node:crypto";
import type { SystemWarning } from "@tarsy/contracts";

type Category = SystemWarning["category"];

/** System warnings of this replica, at most one per (category, server): raised again, it is updated. */
export class SystemWarnings {
  private readonly byKey = new Map<string, SystemWarning>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  raise(category: Category, serverId: string, message: string, details?: string): SystemWarning {
    const key = `${category}:${serverId}`;
    const existing = this.byKey.get(key);
    const warning: SystemWarning = {
      id: existing?.id ?? randomUUID(),
      category,
      server_id: serverId,
      message,
      ...(details ? { details } : {}),
      created_at: existing?.created_at ?? this.now().toISOString(),
    };
    this.byKey.set(key, warning);
    return warning;
  }

  /** Removes the server's warning; true when there was one. */
  clear(category: Category, serverId: string): boolean {
    return this.byKey.delete(`${category}:${serverId}`);
  }

  list(): SystemWarning[] {
    return [...this.byKey.values()];
  }
}
