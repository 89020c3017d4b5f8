import { type Channel, SESSIONS_EVENTS_SUBJECT, sessionEventsSubject } from "@tarsy/contracts";

export interface ChannelTarget {
  channel: Channel;
  /** Relative subject of the channel's persistent events. */
  subject: string;
  /** The session whose chunks this channel carries, if any. */
  sessionId: string | null;
}

export function channelTarget(channel: Channel): ChannelTarget {
  if (channel === "sessions") {
    return { channel, subject: SESSIONS_EVENTS_SUBJECT, sessionId: null };
  }
  const sessionId = channel.slice("session:".length);
  return { channel, subject: sessionEventsSubject(sessionId), sessionId };
}
