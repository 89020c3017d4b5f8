import type { MaskingPatternDefinition } from "./config.ts";

/** Optional quote around a key or value, also in its JSON-escaped form (`\"`). */
const Q = String.raw`(?:\\?["'])?`;
/** Never re-mask a value that was already replaced, nor mask a placeholder (`<set to the key …>`). */
const NOT_MASKED = String.raw`(?!\[MASKED_|<)`;

/**
 * A `key: value` / `key=value` pattern (YAML, JSON, env, query strings). The key and separator
 * are kept (capture group 1) and only the value is replaced, so output stays readable.
 */
function keyValue(keys: string, value: string): string {
  return String.raw`(?i)(${keys}${Q}[ \t]*[:=][ \t]*${Q})${NOT_MASKED}${value}`;
}

/** A base64 run that mixes upper case, lower case and digits (names and paths rarely do). */
const MIXED = "(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[0-9])";

const ENV_SECRET_NAME = String.raw`[A-Za-z0-9_.\-]*(?:TOKEN|PASSWORD|PASSWD|PASS|PWD|SECRET|KEY|CREDENTIALS?|AUTH)[A-Za-z0-9_.\-]*(?<![_.\-](?:FILE|PATH|DIR|NAME|URL|REF|ID))`;

/**
 * The TARSy built-in regex patterns, in the order they are applied: specific shapes first
 * (PEM blocks, provider token formats), then key/value heuristics, then the broad base64 sweeps.
 * Replacements use the `[MASKED_X]` format (not `__X__`, which Markdown renders as bold).
 */
export const BUILTIN_MASKING_PATTERNS: Record<string, MaskingPatternDefinition> = {
  pem_private_key: {
    pattern: String.raw`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?:\\[nr]|[A-Za-z0-9+/=:,\- \t\r\n])*)`,
    replacement: "[MASKED_PRIVATE_KEY]",
    description: "PEM private keys (RSA, EC, OpenSSH, PKCS#8, PGP), also when cut off before END",
  },
  certificate: {
    pattern: String.raw`-----BEGIN [A-Z0-9 ]+-----(?:[\s\S]*?-----END [A-Z0-9 ]+-----|(?:\\[nr]|[A-Za-z0-9+/=:,\- \t\r\n])*)`,
    replacement: "[MASKED_CERTIFICATE]",
    description: "PEM blocks: SSL/TLS certificates and any other BEGIN/END block",
  },
  ssh_key: {
    pattern: String.raw`(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp(?:256|384|521))\s+[A-Za-z0-9+/]{20,}={0,3}`,
    replacement: "[MASKED_SSH_KEY]",
    description: "SSH public keys",
  },
  certificate_authority_data: {
    pattern: String.raw`(?i)(certificate-authority-data${Q}\s*:\s*${Q})${NOT_MASKED}[A-Za-z0-9+/]{20,}={0,2}`,
    replacement: "$1[MASKED_CA_CERTIFICATE]",
    description: "Kubeconfig certificate-authority-data",
  },
  kubeconfig_client_credentials: {
    pattern: String.raw`(?i)((?:client-certificate-data|client-key-data)${Q}\s*:\s*${Q})${NOT_MASKED}[A-Za-z0-9+/]{20,}={0,2}`,
    replacement: "$1[MASKED_CLIENT_CREDENTIAL]",
    description: "Kubeconfig client-certificate-data and client-key-data",
  },
  jwt: {
    pattern: String.raw`\beyJ[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]*`,
    replacement: "[MASKED_JWT]",
    description: "JSON Web Tokens (header.payload.signature)",
  },
  github_token: {
    pattern: String.raw`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`,
    replacement: "[MASKED_GITHUB_TOKEN]",
    description: "GitHub personal, OAuth, app and fine-grained tokens",
  },
  slack_token: {
    pattern: String.raw`\bxox[abposr]-[A-Za-z0-9\-]{10,72}`,
    replacement: "[MASKED_SLACK_TOKEN]",
    description: "Slack tokens",
  },
  slack_webhook: {
    pattern: String.raw`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+`,
    replacement: "[MASKED_SLACK_WEBHOOK]",
    description: "Slack incoming-webhook and workflow URLs (the URL is the credential)",
  },
  gitlab_token: {
    pattern: String.raw`\b(?:glpat|gldt|glrt|glptt|glcbt|glft|glimt|glagent|glsoat|gloas)-[A-Za-z0-9_\-]{20,}`,
    replacement: "[MASKED_GITLAB_TOKEN]",
    description: "GitLab personal, deploy, runner, trigger and other tokens",
  },
  google_oauth: {
    pattern: String.raw`\b(?:GOCSPX-[A-Za-z0-9_\-]{20,}|ya29\.[A-Za-z0-9_\-.]{20,}|1//0[A-Za-z0-9_\-]{30,})`,
    replacement: "[MASKED_GOOGLE_OAUTH]",
    description: "Google OAuth client secrets, access tokens and refresh tokens",
  },
  provider_api_key: {
    pattern: String.raw`\b(?:sk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_\-]{20,}|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_\-]{50,}|xai-[A-Za-z0-9]{40,}|hf_[A-Za-z0-9]{30,}|dop_v1_[a-f0-9]{64}|SG\.[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,})`,
    replacement: "[MASKED_API_KEY]",
    description:
      "API keys of LLM, payment and package providers (OpenAI, Anthropic, Stripe, npm, PyPI, xAI, Hugging Face, DigitalOcean, SendGrid)",
  },
  gcp_api_key: {
    pattern: String.raw`\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])`,
    replacement: "[MASKED_GCP_API_KEY]",
    description: "Google Cloud API keys",
  },
  gcp_service_account_key: {
    pattern: String.raw`((?:\\?")private_key(?:_id)?(?:\\?")\s*:\s*(?:\\?"))${NOT_MASKED}(?:[^"\\]|\\[^"])+`,
    replacement: "$1[MASKED_GCP_KEY]",
    description: "private_key and private_key_id of a GCP service account key file",
  },
  aws_access_key: {
    pattern: String.raw`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`,
    replacement: "[MASKED_AWS_KEY]",
    description: "AWS access key IDs (wherever they appear)",
  },
  aws_secret_key: {
    pattern: keyValue(String.raw`aws[_\-]?secret[_\-]?access[_\-]?key`, "[A-Za-z0-9/+=]{40}"),
    replacement: "$1[MASKED_AWS_SECRET]",
    description: "AWS secret access keys",
  },
  azure_storage_key: {
    pattern: String.raw`((?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*)${NOT_MASKED}[^;\s"']+`,
    replacement: "$1[MASKED_AZURE_KEY]",
    description: "Azure storage / Service Bus connection string keys and SAS signatures",
  },
  azure_sas_signature: {
    pattern: String.raw`([?&]sig=)${NOT_MASKED}[A-Za-z0-9%+/=_\-]{16,}`,
    replacement: "$1[MASKED_SAS_SIGNATURE]",
    description: "Signatures of Azure SAS URLs (and other signed URLs with sig=)",
  },
  client_secret: {
    pattern: keyValue(String.raw`client[_\-]?secret`, String.raw`[A-Za-z0-9_\-.~+/]{8,}={0,2}`),
    replacement: "$1[MASKED_CLIENT_SECRET]",
    description: "OAuth / Azure AD client secrets",
  },
  url_credentials: {
    // Starts with the literal "://" so the engine scans for it instead of trying every offset.
    pattern: String.raw`(://[^:/?#\s@"'\[\]]*:)${NOT_MASKED}[^@/?#\s"']+@`,
    replacement: "$1[MASKED_PASSWORD]@",
    description:
      "Passwords in connection-string URLs (scheme://user:password@host, also without a user)",
  },
  kubernetes_env_secret: {
    pattern: String.raw`(?i)(name"?\s*:\s*"?${ENV_SECRET_NAME}"?\s*,?\s*"?value"?\s*:[ \t]*)(?!"?\[MASKED_)("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,}\]][^\n,}\]]*)`,
    replacement: '$1"[MASKED_SECRET_ENV]"',
    description: "Container env values whose name looks secret (…_TOKEN, …_PASSWORD, …_KEY)",
  },
  bearer_token: {
    pattern: String.raw`(?i)(\bbearer\s+)${NOT_MASKED}[A-Za-z0-9_\-.~+/]{8,}={0,2}`,
    replacement: "$1[MASKED_TOKEN]",
    description: "Bearer tokens in Authorization headers",
  },
  private_key: {
    pattern: keyValue(String.raw`private[_\-]?key`, String.raw`[A-Za-z0-9_\-.+/]{20,}={0,2}`),
    replacement: "$1[MASKED_PRIVATE_KEY]",
    description: "Private keys given as key/value",
  },
  secret_key: {
    pattern: keyValue(String.raw`secret[_\-]?key`, String.raw`[A-Za-z0-9_\-.+/]{20,}={0,2}`),
    replacement: "$1[MASKED_SECRET_KEY]",
    description: "Secret keys given as key/value",
  },
  api_key: {
    pattern: keyValue(String.raw`(?:api[_\-]?key|apikey)`, String.raw`[A-Za-z0-9_\-+/]{20,}={0,2}`),
    replacement: "$1[MASKED_API_KEY]",
    description: "API keys (key: value with a value of 20+ characters)",
  },
  password: {
    pattern: keyValue("(?:password|passwd|pwd|pass)", String.raw`(?:[^"'\s\\]|\\[^"'])+`),
    replacement: "$1[MASKED_PASSWORD]",
    description: "Passwords (password: value, PASSWORD=value, Password=value;)",
  },
  token: {
    pattern: String.raw`(?i)((?:token|bearer|jwt)${Q}[ \t]*[:=][ \t]*${Q}|--token(?:=|[ \t]+)["']?)${NOT_MASKED}[A-Za-z0-9_\-.+/~]{8,}={0,2}`,
    replacement: "$1[MASKED_TOKEN]",
    description: "Access tokens (token: value, --token value)",
  },
  email: {
    pattern: String.raw`\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9]+(?:[.\-][A-Za-z0-9]+)*\.[A-Za-z]{2,63}\b`,
    replacement: "[MASKED_EMAIL]",
    description: "Email addresses",
  },
  base64_short: {
    pattern: String.raw`(:[ \t]+)${NOT_MASKED}(?:${MIXED}[A-Za-z0-9+/]{4,19}={0,2}|[A-Za-z0-9+/]{2,18}={1,2})(?=\s|$)`,
    replacement: "$1[MASKED_SHORT_BASE64]",
    description:
      "Short base64-looking values after a colon: padded, or mixing upper case, lower case and digits (broad)",
  },
  base64_secret: {
    pattern: String.raw`\b${MIXED}[A-Za-z0-9+/]{20,}={0,2}`,
    replacement: "[MASKED_BASE64_VALUE]",
    description:
      "Base64-looking values of 20+ characters mixing upper case, lower case and digits (broad)",
  },
};

/**
 * Text (or a cheap regex) every match of a built-in contains (case-sensitive patterns only):
 * when the content lacks it, the pattern is skipped. Internal; dropped when config overrides it.
 */
export const BUILTIN_PATTERN_PREFILTERS: Record<string, string | RegExp> = {
  pem_private_key: "PRIVATE KEY",
  certificate: "-----BEGIN ",
  jwt: "eyJ",
  slack_token: "xox",
  gcp_api_key: "AIza",
  gcp_service_account_key: "private_key",
  url_credentials: "://",
  // The domain half of an address: starts with a literal, so it is far cheaper than the pattern.
  email: /@[A-Za-z0-9]+(?:[.-][A-Za-z0-9]+)*\.[A-Za-z]{2,63}\b/,
  slack_webhook: "hooks.slack.com",
  google_oauth: /GOCSPX-|ya29\.|1\/\/0/,
  azure_sas_signature: "sig=",
};

/** Code maskers: structural maskers that parse the content instead of matching a regex. */
export const BUILTIN_CODE_MASKERS: readonly string[] = [
  "kubernetes_secret",
  "structured_secrets",
  "secret_assignments",
];

/**
 * What every built-in group masks: every kind of secret the built-ins know, by structure (Secret
 * data, secret-named keys, flags and env items), by name in text, and by shape (tokens and keys
 * of known providers, private keys, credentials in URLs). Groups differ only in what they mask
 * beyond secrets (certificates, emails, SSH public keys, broad base64 sweeps).
 */
const SECRETS_CORE: string[] = [
  "kubernetes_secret",
  "structured_secrets",
  "secret_assignments",
  "pem_private_key",
  "jwt",
  "github_token",
  "gitlab_token",
  "slack_token",
  "slack_webhook",
  "google_oauth",
  "provider_api_key",
  "gcp_api_key",
  "gcp_service_account_key",
  "aws_access_key",
  "aws_secret_key",
  "azure_storage_key",
  "azure_sas_signature",
  "client_secret",
  "url_credentials",
  "kubernetes_env_secret",
  "kubeconfig_client_credentials",
  "bearer_token",
  "private_key",
  "secret_key",
  "api_key",
  "password",
  "token",
];

/** Named groups of patterns (and code maskers) that configs refer to by `pattern_groups`. */
export const BUILTIN_PATTERN_GROUPS: Record<string, string[]> = {
  basic: SECRETS_CORE,
  secrets: SECRETS_CORE,
  security: [...SECRETS_CORE, "certificate", "certificate_authority_data", "email", "ssh_key"],
  kubernetes: [...SECRETS_CORE, "certificate_authority_data"],
  cloud: SECRETS_CORE,
  all: [...BUILTIN_CODE_MASKERS, ...Object.keys(BUILTIN_MASKING_PATTERNS)],
};

/** True for a name a config may list in `patterns`: a built-in regex or a code masker. */
export function isKnownPatternName(name: string): boolean {
  return Object.hasOwn(BUILTIN_MASKING_PATTERNS, name) || BUILTIN_CODE_MASKERS.includes(name);
}
