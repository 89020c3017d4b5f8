import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const PROTO_DIR = fileURLToPath(new URL("../../proto", import.meta.url));

/** Decoding options shared by server and client: snake_case fields, defaults filled in. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

export interface LoadedProtos {
  llmService: grpc.ServiceDefinition;
  healthService: grpc.ServiceDefinition;
}

function serviceOf(pkg: grpc.GrpcObject, path: string[]): grpc.ServiceDefinition {
  let node: unknown = pkg;
  for (const part of path) node = (node as Record<string, unknown>)[part];
  const ctor = node as { service?: grpc.ServiceDefinition } | undefined;
  if (!ctor?.service) throw new Error(`proto service ${path.join(".")} not found`);
  return ctor.service;
}

export function loadProtos(): LoadedProtos {
  const llm = grpc.loadPackageDefinition(
    protoLoader.loadSync(`${PROTO_DIR}/llm_service.proto`, PROTO_LOADER_OPTIONS),
  );
  const health = grpc.loadPackageDefinition(
    protoLoader.loadSync(`${PROTO_DIR}/health.proto`, PROTO_LOADER_OPTIONS),
  );
  return {
    llmService: serviceOf(llm, ["llm", "v1", "LLMService"]),
    healthService: serviceOf(health, ["grpc", "health", "v1", "Health"]),
  };
}
