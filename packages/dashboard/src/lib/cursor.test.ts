import { describe, expect, it } from "vitest";
import { ChannelCursors } from "./cursor.ts";

describe("ChannelCursors", () => {
  it("drops replayed ids and catches up from the last one per channel", () => {
    const c = new ChannelCursors();
    expect(c.joinAction("session:s1")).toEqual({ action: "subscribe", channel: "session:s1" });
    expect([5, 7, 7, 6, 9].map((id) => c.accept("session:s1", id))).toEqual([
      true,
      true,
      false,
      false,
      true,
    ]);
    expect(c.accept("sessions", 6)).toBe(true);
    expect(c.joinAction("session:s1")).toEqual({
      action: "catchup",
      channel: "session:s1",
      last_event_id: 9,
    });
    c.forget("session:s1");
    expect(c.joinAction("session:s1").action).toBe("subscribe");
    expect(c.lastEventId("sessions")).toBe(6);
  });
});
