/**
 * The secrets keys of a deployment as a ring: the current key seals
 * what is kept at rest, every key of the ring still opens it (`src/storage/secret-box.ts`,
 * where each sealed value names the id of its key).
 *
 * Written down newest first, one base64url key of 32 bytes per entry: comma-separated in
 * `SECRETS_KEY`, one per line in `DATA_DIR/keys/secrets.key`. A single key, as every
 * deployment had before rotation existed, is a ring of one. `rotateSecretsKeyFile` puts a
 * fresh key in front of the file's ring; `npm run secrets:rotate` is its command.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { keyId, type SecretsKeyring } from '../storage/secret-box.ts';

/** The file of the generated ring inside `DATA_DIR/keys`. */
export const SECRETS_KEY_FILE = 'secrets.key';

/** Keys written newest first, comma- or line-separated; throws on one that is not 32 bytes. */
export function parseSecretsKeys(text: string): SecretsKeyring {
  const keys = text
    .split(/[\s,]+/)
    .filter((entry) => entry !== '')
    .map((entry) => {
      const key = Buffer.from(entry, 'base64url');
      if (key.length !== 32 || key.toString('base64url') !== entry.replace(/=+$/, '')) {
        throw new TypeError('each secrets key must be 32 bytes in base64url');
      }
      return key;
    });
  const [current, ...previous] = keys;
  if (current === undefined) throw new TypeError('no secrets key is given');
  return { current, previous };
}

/** The ring as `SECRETS_KEY` or the file spells it: newest first. */
export function formatSecretsKeys(ring: SecretsKeyring, separator: string): string {
  return [ring.current, ...ring.previous].map((key) => key.toString('base64url')).join(separator);
}

/** A ring with a fresh current key in front of `ring`. */
export function withNewKey(ring: SecretsKeyring): SecretsKeyring {
  return { current: randomBytes(32), previous: [ring.current, ...ring.previous] };
}

/**
 * Puts a fresh key in front of the ring in `keysDir/secrets.key` (written whole to a
 * temporary file, mode 0600, then renamed over it, so a crash leaves the old ring or the
 * new one). Answers the new ring; processes take it at their next start.
 */
export async function rotateSecretsKeyFile(keysDir: string): Promise<SecretsKeyring> {
  const file = path.join(keysDir, SECRETS_KEY_FILE);
  const ring = withNewKey(parseSecretsKeys(await readFile(file, 'utf8')));
  const next = `${file}.${keyId(ring.current)}.tmp`;
  await writeFile(next, `${formatSecretsKeys(ring, '\n')}\n`, { mode: 0o600, flag: 'wx' });
  await rename(next, file);
  return ring;
}
