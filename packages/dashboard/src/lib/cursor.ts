import type { Channel } from "@tarsy/contracts";

/**
 * The last event id seen per channel. Event ids are the events stream's sequence numbers and
 * grow on each channel, so an id at or below the cursor is a duplicate (a replay overlap after
 * a reconnect) and is dropped.
 */
export class ChannelCursors {
  private readonly last = new Map<Channel, number>();

  /** True when the event is new on the channel (and moves the cursor); false for a duplicate. */
  accept(channel: Channel, id: number): boolean {
    const seen = this.last.get(channel) ?? 0;
    if (id <= seen) return false;
    this.last.set(channel, id);
    return true;
  }

  /** The action that (re)joins a channel: a catch-up from the cursor, or a plain subscribe. */
  joinAction(
    channel: Channel,
  ):
    | { action: "subscribe"; channel: Channel }
    | { action: "catchup"; channel: Channel; last_event_id: number } {
    const seen = this.last.get(channel);
    return seen === undefined
      ? { action: "subscribe", channel }
      : { action: "catchup", channel, last_event_id: seen };
  }

  lastEventId(channel: Channel): number | undefined {
    return this.last.get(channel);
  }

  forget(channel: Channel): void {
    this.last.delete(channel);
  }
}
