/**
 * The service's long-lived key material: the EdDSA signing key for tokens, the key that
 * seals secrets at rest, and the operator token's hash. Each comes from configuration or,
 * when absent, is generated once into `DATA_DIR/keys` (mode 0600) so that tokens and
 * sealed values survive restarts.
 */
import { createHash, createPublicKey, hash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { exportPKCS8, generateKeyPair, importPKCS8, importSPKI, type CryptoKey } from 'jose';
import { rootKey, type SecretsKeyring } from '../storage/secret-box.ts';
import { parseSecretsKeys, SECRETS_KEY_FILE } from './secrets-keys.ts';

export const SIGNING_ALG = 'EdDSA';

export interface SigningKey {
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  /** A stable key id: the SHA-256 of the PKCS#8 PEM, truncated. */
  readonly kid: string;
}

export interface KeyMaterial {
  readonly signing: SigningKey;
  /**
   * The secrets keys (`secrets-keys.ts`): the current one seals values at rest in the
   * control store, every one opens them.
   */
  readonly secretsKeyring: SecretsKeyring;
  /**
   * The ring's first key, which keys that must never change derive from (session ids,
   * the sealed layers of session logs, OAuth callback bindings): the one secrets key of a
   * deployment that never rotated.
   */
  readonly secretsKey: Buffer;
  /** SHA-256 hex of the operator token (decisions row 73); the token itself is not kept. */
  readonly operatorTokenHash: string;
  /** Set only on the start that generated the operator token: printed once, then gone. */
  readonly generatedOperatorToken: string | undefined;
}

export interface KeyMaterialOptions {
  readonly dataDir: string;
  readonly signingKeyPem: string | undefined;
  /** `SECRETS_KEY`: one key, or a ring newest first, comma-separated. */
  readonly secretsKey: string | undefined;
  readonly operatorToken: string | undefined;
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Writes a new file only if none exists (`wx`), so two processes starting together agree. */
async function writeOnce(file: string, content: string): Promise<string> {
  try {
    await writeFile(file, content, { mode: 0o600, flag: 'wx' });
    return content;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFile(file, 'utf8');
    throw error;
  }
}

async function signingKeyFrom(pem: string): Promise<SigningKey> {
  const privateKey = await importPKCS8(pem, SIGNING_ALG, { extractable: true });
  const spki = createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();
  const publicKey = await importSPKI(spki, SIGNING_ALG);
  const kid = createHash('sha256').update(pem).digest('base64url').slice(0, 16);
  return { privateKey, publicKey, kid };
}

/**
 * SHA-256 hex of an opaque credential: what the stores keep instead of the credential.
 * One-shot `hash` gives the same digest as `createHash` without a Hash object.
 */
export function hashCredential(credential: string): string {
  return hash('sha256', credential, 'hex');
}

/**
 * Where the operator token's hash is kept: deleting it makes the next start generate a new
 * token and print it once (the old one stops working).
 */
export function operatorTokenFile(dataDir: string): string {
  return path.join(dataDir, 'keys', 'operator-token.sha256');
}

/** Loads the key material from configuration or `DATA_DIR/keys`, generating what is missing. */
export async function loadKeyMaterial(options: KeyMaterialOptions): Promise<KeyMaterial> {
  const dir = path.join(options.dataDir, 'keys');
  await mkdir(dir, { recursive: true, mode: 0o700 });

  let pem = options.signingKeyPem;
  if (pem === undefined) {
    const file = path.join(dir, 'signing.pem');
    pem = await readOptional(file);
    if (pem === undefined) {
      const pair = await generateKeyPair(SIGNING_ALG, { crv: 'Ed25519', extractable: true });
      pem = await writeOnce(file, await exportPKCS8(pair.privateKey));
    }
  }

  let secrets = options.secretsKey;
  if (secrets === undefined) {
    const file = path.join(dir, SECRETS_KEY_FILE);
    secrets = (await readOptional(file))?.trim();
    secrets ??= (await writeOnce(file, randomBytes(32).toString('base64url'))).trim();
  }
  const ring = parseSecretsKeys(secrets);

  let generatedOperatorToken: string | undefined;
  let operatorTokenHash: string;
  if (options.operatorToken !== undefined) {
    operatorTokenHash = hashCredential(options.operatorToken);
  } else {
    const file = operatorTokenFile(options.dataDir);
    const stored = (await readOptional(file))?.trim();
    if (stored === undefined) {
      const token = `op_${randomBytes(32).toString('base64url')}`;
      operatorTokenHash = (await writeOnce(file, hashCredential(token))).trim();
      if (operatorTokenHash === hashCredential(token)) generatedOperatorToken = token;
    } else {
      operatorTokenHash = stored;
    }
  }

  return {
    signing: await signingKeyFrom(pem),
    secretsKeyring: ring,
    secretsKey: rootKey(ring),
    operatorTokenHash,
    generatedOperatorToken,
  };
}
