import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * AES-256-GCM for the users' bearer tokens kept while their sessions run. The key comes from
 * the environment (32 bytes, base64); the stored form is `v1.<iv>.<tag>.<ciphertext>`, each
 * base64url. Opening with the wrong key, or a changed value, throws.
 */
export interface TokenSeal {
  seal(plain: string): string;
  open(sealed: string): string;
}

export function parseSealKey(base64: string): Buffer {
  const key = Buffer.from(base64, "base64");
  if (key.length !== 32) {
    throw new Error(`the token key must be 32 bytes, base64 encoded (got ${key.length} bytes)`);
  }
  return key;
}

export function createTokenSeal(key: Buffer): TokenSeal {
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"));
      return `v1.${parts.join(".")}`;
    },
    open(sealed) {
      const [version, iv = "", tag = "", body = ""] = sealed.split(".");
      if (version !== "v1") throw new Error("unknown sealed token version");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([
        decipher.update(Buffer.from(body, "base64url")),
        decipher.final(),
      ]).toString("utf8");
    },
  };
}
