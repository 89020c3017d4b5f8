/**
 * The demo cluster: an MCP server (stdio, built with the MCP SDK) that answers like a small
 * Kubernetes cluster where a payments pod is crash-looping. Used by the demo mode of the local
 * stack and by the whole-system tests; its Secret carries a planted credential that TARSy must
 * mask before any LLM, log or database sees it.
 *
 * Plain JavaScript, so `node` runs it directly: the gateway starts it for every execution, and
 * it answers in a third of the time it takes through a TypeScript loader.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

export const PLANTED_PASSWORD = "hunter2-demo-db-password";
const PLANTED_B64 = Buffer.from(PLANTED_PASSWORD).toString("base64");

const server = new McpServer({ name: "demo-cluster", version: "1.0.0" });
/** Every tool here only reads: agents of every kind may call them (see tool classes). */
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
/** @param {string} value */
const text = (value) => ({ content: [{ type: /** @type {const} */ ("text"), text: value }] });

server.registerTool(
  "get_pods",
  {
    description: "List pods of a namespace with status, restarts and age",
    inputSchema: { namespace: z.string() },

    annotations: READ_ONLY,
  },
  async ({ namespace }) =>
    text(
      namespace === "payments"
        ? [
            "NAME                          READY   STATUS             RESTARTS   AGE",
            "payments-api-7f9c6d5b8-x2kqz  0/1     CrashLoopBackOff   14         52m",
            "payments-api-7f9c6d5b8-m8wtn  1/1     Running            0          52m",
            "payments-worker-5d8f7-q9zt2   1/1     Running            2          3h",
          ].join("\n")
        : `No resources found in ${namespace} namespace.`,
    ),
);

server.registerTool(
  "get_pod_logs",
  {
    description: "Last log lines of a pod",
    inputSchema: { namespace: z.string(), pod: z.string(), tail: z.number().int().optional() },

    annotations: READ_ONLY,
  },
  async ({ pod }) =>
    text(
      pod.startsWith("payments-api")
        ? [
            "2026-11-22T03:11:58Z INFO  starting payments-api v2.14.1",
            "2026-11-22T03:11:59Z INFO  connecting to postgres payments-db:5432",
            "2026-11-22T03:12:03Z WARN  heap usage 1890Mi of 2048Mi",
            "2026-11-22T03:12:04Z ERROR java.lang.OutOfMemoryError: Java heap space",
            "2026-11-22T03:12:04Z INFO  container exiting with code 137",
          ].join("\n")
        : "2026-11-22T03:10:00Z INFO  healthy",
    ),
);

server.registerTool(
  "describe_pod",
  {
    description: "A pod in detail (kubectl describe pod): containers, limits, state, events",
    inputSchema: { namespace: z.string(), pod: z.string() },

    annotations: READ_ONLY,
  },
  async ({ namespace, pod }) =>
    text(
      pod.startsWith("payments-api")
        ? [
            `Name:             ${pod}`,
            `Namespace:        ${namespace}`,
            "Priority:         0",
            "Service Account:  payments-api",
            "Node:             worker-3/10.0.3.17",
            "Start Time:       Sun, 22 Nov 2026 02:20:11 +0000",
            "Labels:           app=payments-api",
            "                  pod-template-hash=7f9c6d5b8",
            "Status:           Running",
            "IP:               10.244.3.41",
            "Controlled By:    ReplicaSet/payments-api-7f9c6d5b8",
            "Containers:",
            "  payments-api:",
            "    Image:          registry.example.com/payments-api:2.14.1",
            "    Port:           8080/TCP",
            "    State:          Waiting",
            "      Reason:       CrashLoopBackOff",
            "    Last State:     Terminated",
            "      Reason:       OOMKilled",
            "      Exit Code:    137",
            "      Started:      Sun, 22 Nov 2026 03:11:58 +0000",
            "      Finished:     Sun, 22 Nov 2026 03:12:04 +0000",
            "    Ready:          False",
            "    Restart Count:  14",
            "    Limits:",
            "      cpu:     1",
            "      memory:  2Gi",
            "    Requests:",
            "      cpu:     500m",
            "      memory:  1Gi",
            "    Environment:",
            "      JAVA_OPTS:    -Xms1g -Xmx1900m",
            "      DB_HOST:      payments-db",
            "      DB_PASSWORD:  <set to the key 'password' in secret 'payments-db'>",
            "Conditions:",
            "  Type              Status",
            "  Initialized       True",
            "  Ready             False",
            "  ContainersReady   False",
            "  PodScheduled      True",
            "QoS Class:          Burstable",
            "Events:",
            "  Type     Reason   Age                 From     Message",
            "  ----     ------   ----                ----     -------",
            "  Normal   Pulled   52m (x15 over 52m)  kubelet  Container image already present on machine",
            "  Warning  BackOff  2m (x212 over 51m)  kubelet  Back-off restarting failed container",
          ].join("\n")
        : `Error from server (NotFound): pods "${pod}" not found`,
    ),
);

server.registerTool(
  "get_events",
  {
    description: "Recent events of a namespace",
    inputSchema: { namespace: z.string() },
    annotations: READ_ONLY,
  },
  async () =>
    text(
      [
        "LAST SEEN   TYPE      REASON      OBJECT                              MESSAGE",
        "2m          Warning   BackOff     pod/payments-api-7f9c6d5b8-x2kqz    Back-off restarting failed container",
        "2m          Warning   OOMKilling  node/worker-3                       Memory cgroup out of memory: Killed process 4121 (java)",
        "52m         Normal    Scaled      deployment/payments-api             Scaled up replica set payments-api-7f9c6d5b8 to 2",
      ].join("\n"),
    ),
);

server.registerTool(
  "get_secret",
  {
    description: "A Secret as YAML (kubectl get secret -o yaml)",
    inputSchema: { namespace: z.string(), name: z.string() },

    annotations: READ_ONLY,
  },
  async ({ namespace, name }) =>
    text(
      [
        "apiVersion: v1",
        "kind: Secret",
        "metadata:",
        `  name: ${name}`,
        `  namespace: ${namespace}`,
        "type: Opaque",
        "data:",
        `  password: ${PLANTED_B64}`,
        "  username: cGF5bWVudHM=",
      ].join("\n"),
    ),
);

await server.connect(new StdioServerTransport());
