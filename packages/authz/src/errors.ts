/** Why a caller could not be identified; each is a 401 on the HTTP API and at the relay. */
export type AuthErrorCode =
  | "untrusted_identity"
  | "unauthenticated"
  | "invalid_token"
  | "token_expired"
  | "token_revoked";

export class AuthError extends Error {
  constructor(
    readonly code: AuthErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "AuthError";
  }
}
