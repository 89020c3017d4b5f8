// Container health check of llm-service: the standard grpc.health.v1 Check of service "".
// Exits 0 when the server answers SERVING, 1 otherwise (HEALTHCHECK, compose).
//   node grpc-health.mjs [host:port]   (default 127.0.0.1:50051)
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const target = process.argv[2] ?? "127.0.0.1:50051";
const protoFile = fileURLToPath(new URL("../proto/health.proto", import.meta.url));
const definition = grpc.loadPackageDefinition(protoLoader.loadSync(protoFile, { enums: String }));
const Health = definition.grpc.health.v1.Health;
const client = new Health(target, grpc.credentials.createInsecure());
const deadline = new Date(Date.now() + 3000);
client.Check({ service: "" }, { deadline }, (err, reply) => {
  client.close();
  const serving = !err && reply?.status === "SERVING";
  if (!serving) console.error(err ? err.message : `status ${reply?.status}`);
  process.exit(serving ? 0 : 1);
});
