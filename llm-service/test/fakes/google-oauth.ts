import { generateKeyPairSync, type KeyObject, verify } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** A JWT-bearer grant as the fake token endpoint received it. */
export interface ReceivedGrant {
  grantType: string | null;
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  /** RS256 signature checked against the service account's public key. */
  signatureValid: boolean;
  /** The access token answered (absent when the grant was refused). */
  issued?: string;
}

export interface FakeOAuth {
  /** The `token_uri` to write into a service-account key. */
  tokenUri: string;
  grants: ReceivedGrant[];
  /** Registers a service account's public key: grants signed with it are accepted. */
  trust(publicKey: KeyObject): void;
  close(): Promise<void>;
}

function decodePart(part: string | undefined): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(part ?? "", "base64url").toString("utf8")) as Record<
      string,
      unknown
    >;
  } catch {
    return {};
  }
}

/**
 * A loopback stand-in for Google's OAuth token endpoint (service-account flow): it checks the
 * assertion's RS256 signature against the trusted public keys and answers an access token,
 * or `invalid_grant` as Google does for a key it does not know.
 */
export async function startFakeOAuth(): Promise<FakeOAuth> {
  const grants: ReceivedGrant[] = [];
  const trusted: KeyObject[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      const [header, claims, signature] = (form.get("assertion") ?? "").split(".");
      const signatureValid = trusted.some((publicKey) =>
        verify(
          "RSA-SHA256",
          Buffer.from(`${header}.${claims}`),
          publicKey,
          Buffer.from(signature ?? "", "base64url"),
        ),
      );
      const grant: ReceivedGrant = {
        grantType: form.get("grant_type"),
        header: decodePart(header),
        claims: decodePart(claims),
        signatureValid,
      };
      grants.push(grant);
      res.setHeader("content-type", "application/json");
      if (!signatureValid || grant.grantType !== JWT_BEARER_GRANT) {
        res
          .writeHead(400)
          .end(
            JSON.stringify({ error: "invalid_grant", error_description: "Invalid JWT Signature." }),
          );
        return;
      }
      grant.issued = `ya29.fake-token-${grants.length}`;
      res
        .writeHead(200)
        .end(
          JSON.stringify({ access_token: grant.issued, expires_in: 3599, token_type: "Bearer" }),
        );
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    tokenUri: `http://127.0.0.1:${port}/token`,
    grants,
    trust: (publicKey) => void trusted.push(publicKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A service account: its key JSON (as Google issues it) and the public half for the fake. */
export function serviceAccount(tokenUri: string, projectId = "sa-own-project") {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const email = `tarsy-llm@${projectId}.iam.gserviceaccount.com`;
  const key = {
    type: "service_account",
    project_id: projectId,
    private_key_id: "0123456789abcdef",
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    client_email: email,
    client_id: "104242424242424242424",
    auth_uri: "https://accounts.google.com/o/oauth2/auth",
    token_uri: tokenUri,
  };
  return { key, json: JSON.stringify(key), email, publicKey };
}
