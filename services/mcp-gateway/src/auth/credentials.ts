import type { McpServerConfig } from "@tarsy/config";
import type { Logger } from "@tarsy/runtime";
import type { ExecutionScope } from "../client/execution-registry.ts";
import { UserCredentialsMissingError } from "../errors.ts";
import { type CallCredential, withCallCredential } from "./call-credentials.ts";
import type { TokenExchanger } from "./token-exchange.ts";

/**
 * The submitting (or asking) user's bearer token for an execution, or undefined when there is
 * none (a session from Alertmanager or an API token, an expired or wiped token). Production
 * reads the sealed token from Postgres and opens it (./user-token-store.ts).
 */
export type UserTokenLookup = (scope: ExecutionScope) => Promise<string | undefined>;

export interface CallAuthDeps {
  userTokens?: UserTokenLookup | undefined;
  exchanger: TokenExchanger;
  logger: Logger;
}

/**
 * Runs one MCP operation of an execution against one server with the credential its
 * `auth.mode` asks for: `shared` as configured; `forward_user_token` with the user's token;
 * `token_exchange` with the token the STS gives for it. No user token: the shared credential
 * when `fallback_to_shared`, else UserCredentialsMissingError before anything is sent.
 */
export class CallAuth {
  constructor(private readonly deps: CallAuthDeps) {}

  async run<T>(
    scope: ExecutionScope,
    config: McpServerConfig,
    operation: () => Promise<T>,
  ): Promise<T> {
    const credential = await this.credentialFor(scope, config);
    return credential ? withCallCredential(credential, operation) : operation();
  }

  private async credentialFor(
    scope: ExecutionScope,
    config: McpServerConfig,
  ): Promise<CallCredential | undefined> {
    const auth = config.auth;
    if (auth.mode === "shared") return undefined;
    const userToken = this.deps.userTokens ? await this.deps.userTokens(scope) : undefined;
    if (!userToken) {
      if (auth.fallback_to_shared) {
        this.deps.logger.info(
          { execution_id: scope.executionId, session_id: scope.sessionId, server: config.id },
          "no user token: using the server's shared credentials (fallback_to_shared)",
        );
        return undefined;
      }
      throw new UserCredentialsMissingError(config.id);
    }
    switch (auth.mode) {
      case "forward_user_token":
        return { bearer: userToken };
      case "token_exchange": {
        if (!auth.token_exchange) throw new UserCredentialsMissingError(config.id);
        const bearer = await this.deps.exchanger.exchange(
          config.id,
          auth.token_exchange,
          userToken,
        );
        return { bearer };
      }
      default: {
        const unreachable: never = auth.mode;
        return unreachable;
      }
    }
  }
}
