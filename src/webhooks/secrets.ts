import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../shared/config";
import { privateDir } from "../db/files";

/**
 * Webhook secrets are sealed with AES-256-GCM before they are stored: a copy of the database (a
 * backup) holds no secret in clear. The key is `BASALT_SECRET_KEY` (any string, hashed to 32
 * bytes), or 32 random bytes in `<data dir>/secret.key`, created with mode 0600 on first use.
 */
export class SecretBox {
  private key: Buffer | null = null;

  constructor(private readonly config: Pick<Config, "dataDir" | "secretKey">) {}

  private keyBytes(): Buffer {
    if (this.key) return this.key;
    if (this.config.secretKey) return (this.key = createHash("sha256").update(this.config.secretKey).digest());
    const path = join(this.config.dataDir, "secret.key");
    if (!existsSync(path)) {
      privateDir(this.config.dataDir);
      writeFileSync(path, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" });
    }
    return (this.key = Buffer.from(readFileSync(path, "utf8").trim(), "base64"));
  }

  /** `v1.<iv>.<ciphertext>.<tag>`, each part base64url. */
  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.keyBytes(), iv);
    const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return ["v1", iv, body, cipher.getAuthTag()].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
  }

  sign(text: string): string {
    // A key of its own for signatures, derived from the sealing key: a signature never reveals or reuses the cipher's key.
    return createHmac("sha256", createHmac("sha256", this.keyBytes()).update("basalt signed links").digest()).update(text).digest("base64url");
  }

  open(sealed: string): string {
    const [version, iv, body, tag] = sealed.split(".");
    if (version !== "v1" || !iv || !body || !tag) throw new Error("A stored webhook secret is not in a known form.");
    const decipher = createDecipheriv("aes-256-gcm", this.keyBytes(), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  }
}
