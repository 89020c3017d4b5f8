import * as grpc from "@grpc/grpc-js";

export type ServingStatus = "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN";

/** The standard grpc.health.v1 service: Check and Watch for "" and named services. */
export interface HealthService {
  handlers: grpc.UntypedServiceImplementation;
  setStatus(service: string, status: ServingStatus): void;
  status(service: string): ServingStatus;
}

export function createHealthService(initial: Record<string, ServingStatus>): HealthService {
  const statuses = new Map<string, ServingStatus>(Object.entries(initial));
  const watchers = new Map<string, Set<grpc.ServerWritableStream<{ service: string }, unknown>>>();

  const check: grpc.handleUnaryCall<{ service: string }, { status: ServingStatus }> = (
    call,
    callback,
  ) => {
    const status = statuses.get(call.request.service);
    if (!status) {
      callback({
        code: grpc.status.NOT_FOUND,
        details: `unknown service "${call.request.service}"`,
      });
      return;
    }
    callback(null, { status });
  };

  const watch: grpc.handleServerStreamingCall<{ service: string }, { status: ServingStatus }> = (
    call,
  ) => {
    const service = call.request.service;
    const set = watchers.get(service) ?? new Set();
    watchers.set(service, set);
    set.add(call);
    call.write({ status: statuses.get(service) ?? "SERVICE_UNKNOWN" });
    call.on("cancelled", () => set.delete(call));
  };

  return {
    handlers: { Check: check, Watch: watch } as grpc.UntypedServiceImplementation,
    status: (service) => statuses.get(service) ?? "SERVICE_UNKNOWN",
    setStatus(service, status) {
      statuses.set(service, status);
      for (const call of watchers.get(service) ?? []) call.write({ status });
      if (status === "NOT_SERVING") {
        for (const call of watchers.get(service) ?? []) call.end();
        watchers.delete(service);
      }
    },
  };
}
