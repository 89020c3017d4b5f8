export { type ActionDecisionMetrics, recordActionDecision } from "./actions.ts";
export {
  type LabelOf,
  METRICS,
  type MetricDef,
  type MetricKey,
  type MetricKeyOf,
  type MetricType,
  SERVICE_NAMES,
  type ServiceName,
} from "./catalog.ts";
export { DEFAULT_METRICS_PORT, MetricsEnvShape } from "./env.ts";
export {
  type CheckResult,
  checkHealth,
  checkReadiness,
  createOpsRoutes,
  type HealthCheckSpec,
  type HealthChecks,
  type HealthEntry,
  type HealthReport,
  type OpsReply,
  type OpsRoutes,
  type OpsRoutesOptions,
  type OpsServer,
  type OpsServerOptions,
  type ReadinessCheck,
  type ReadinessChecks,
  type ReadinessReport,
  startOpsServer,
  TARSY_VERSION,
} from "./ops-server.ts";
export {
  type CollectLogger,
  type CreateMetricsOptions,
  createMetrics,
  type GaugeCollector,
  type MetricOf,
  type ServiceMetrics,
} from "./registry.ts";
export { secondsBetween, secondsSince } from "./timing.ts";
