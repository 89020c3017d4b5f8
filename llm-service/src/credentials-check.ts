import { ConfigError, formatIssue, isCredentialIssue, loadConfig } from "@tarsy/config";

/**
 * The credential problems of TARSy's configuration as seen from llm-service, the one process
 * that holds provider keys: a fallback provider whose key variable is unset, a Vertex AI
 * provider whose credential, project or location variable is unset. A fallback that cannot
 * authenticate gives a false sense of safety, so llm-service does not start with one. Other
 * problems of the configuration are for the services that use those parts to report.
 */
export function credentialProblems(
  configDir: string,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  try {
    loadConfig({ configDir, env, credentialEnv: env });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.filter(isCredentialIssue).map(formatIssue);
  }
}
