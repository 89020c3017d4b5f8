import { describe, expect, it } from "vitest";
import { CONSUMERS, WORK_SUBJECTS } from "./catalog.ts";

describe("catalog", () => {
  it("routes every work message to exactly one consumer by its filter subject", () => {
    for (const [key, subject] of Object.entries(WORK_SUBJECTS)) {
      const owners = Object.values(CONSUMERS).filter((c) =>
        subject.startsWith(c.filterSubject.replace(/>$/, "")),
      );
      expect(owners, key).toHaveLength(1);
      expect(owners[0]?.messages as readonly string[], key).toContain(key);
    }
  });
});
