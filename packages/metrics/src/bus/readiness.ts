import type { Bus } from "@tarsy/bus";
import type { ReadinessCheck } from "../ops-server.ts";

/** NATS is connected and answers a PING in time. */
export function natsReadiness(bus: Pick<Bus, "health">, timeoutMs = 1_500): ReadinessCheck {
  return async () => {
    const health = await bus.health(timeoutMs);
    if (!health.connected) throw new Error(health.error ?? "not connected");
  };
}
