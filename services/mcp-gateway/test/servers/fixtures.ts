/**
 * Planted secrets: every value here must never come out of the gateway unmasked.
 * The ConfigMap values must come out as they are.
 */
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

export const PLANTED = {
  dbPassword: "Planted-DB-Pa55word-7781",
  apiToken: "plantedtoken0123456789abcdefXYZ",
  awsAccessKey: "AKIAPLANTED000KEY12Z",
  awsSecret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY",
  bearer: "PlantedBearerTokenValue-0987654321",
  jsonPassword: "Json-Planted-Secret-4455",
  listPassword: "List-Planted-Secret-9911",
  annotationPassword: "Annotation-Planted-Secret-3131",
  privateKeyBody: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDPLANTEDKEYBODY",
  certBody: "MIIDdzCCAl+gAwIBAgIEPLANTEDCERTBODYAQ2Ei2h2Nj6MA0GCSqGSIb3DQEBCwUA",
} as const;

/** Values that must survive masking untouched. */
export const CONFIGMAP_VALUES = {
  logLevel: "debug-verbose-level-42",
  featureFlags: "flag-alpha,flag-beta",
} as const;

export const SECRET_YAML = `apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  namespace: prod
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","kind":"Secret","metadata":{"name":"db-credentials"},"stringData":{"password":"${PLANTED.annotationPassword}"}}
type: Opaque
data:
  password: ${b64(PLANTED.dbPassword)}
  token: ${b64(PLANTED.apiToken)}
stringData:
  aws_secret_access_key: ${PLANTED.awsSecret}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  namespace: prod
data:
  log_level: ${CONFIGMAP_VALUES.logLevel}
  feature_flags: ${CONFIGMAP_VALUES.featureFlags}
`;

export const SECRET_JSON = JSON.stringify(
  {
    apiVersion: "v1",
    kind: "List",
    items: [
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "json-secret", namespace: "prod" },
        type: "Opaque",
        data: { password: b64(PLANTED.jsonPassword) },
      },
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "json-config", namespace: "prod" },
        data: { log_level: CONFIGMAP_VALUES.logLevel },
      },
    ],
  },
  null,
  2,
);

export const SECRET_LIST_JSON = JSON.stringify(
  {
    apiVersion: "v1",
    kind: "SecretList",
    items: [
      { kind: "Secret", metadata: { name: "first" }, data: { pw: b64(PLANTED.listPassword) } },
      { kind: "Secret", metadata: { name: "second" }, stringData: { token: PLANTED.apiToken } },
    ],
  },
  null,
  2,
);

export const TOKENS_TEXT = `Deployment env dump:
  DB_PASSWORD=${PLANTED.dbPassword}
  password: ${PLANTED.dbPassword}
  api_token: ${PLANTED.apiToken}
  AWS_ACCESS_KEY_ID=${PLANTED.awsAccessKey}
  aws_secret_access_key = ${PLANTED.awsSecret}
curl -H "Authorization: Bearer ${PLANTED.bearer}" https://api.internal
-----BEGIN PRIVATE KEY-----
${PLANTED.privateKeyBody}
-----END PRIVATE KEY-----
-----BEGIN CERTIFICATE-----
${PLANTED.certBody}
-----END CERTIFICATE-----
done.`;

export const CONFIGMAP_YAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  log_level: ${CONFIGMAP_VALUES.logLevel}
  feature_flags: ${CONFIGMAP_VALUES.featureFlags}
`;

/** Every planted form: plain and base64. */
export function plantedForms(): string[] {
  return Object.values(PLANTED).flatMap((v) => [v, b64(v)]);
}
