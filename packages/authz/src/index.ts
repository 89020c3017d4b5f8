export { ALL_PROJECTS, type Authorizer, createAuthorizer } from "./authorizer.ts";
export { AuthError, type AuthErrorCode } from "./errors.ts";
export {
  createIdentityResolver,
  type Identity,
  type IdentityDeps,
  type IdentityResolver,
  type IdentitySource,
  identityHeaderCheck,
  identityHeaders,
  type RequestFacts,
  receiverIdentity,
  type StoredApiToken,
  TOKEN_COOKIE,
  trustedProxyMatcher,
} from "./identity.ts";
export { createPolicy, type Policy } from "./policy.ts";
export { createTokenSeal, parseSealKey, type TokenSeal } from "./seal.ts";
export {
  API_TOKEN_PREFIX,
  bearerOf,
  hashApiToken,
  isApiTokenShape,
  newApiToken,
} from "./tokens.ts";
