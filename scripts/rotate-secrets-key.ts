/**
 * `npm run secrets:rotate`: puts a new secrets key in front of the ring.
 * From the next start on, values sealed at rest (tenant secrets, connections' OAuth
 * credentials) are sealed under the new key; those sealed before keep opening under the
 * keys behind it. Restart every process of the deployment after rotating: a process still
 * on the old ring cannot open what one on the new ring sealed.
 *
 * - With `SECRETS_KEY` set, the keys live in the environment: the new ring is printed as
 *   the value to give `SECRETS_KEY` everywhere, and nothing is written.
 * - Otherwise the ring in `DATA_DIR/keys/secrets.key` (DATA_DIR defaults to `./data`) gets
 *   the new key, written atomically with mode 0600.
 *
 * The new key's id is printed; no key is printed except in the first case, where the
 * operator must carry it to the environment.
 */
import path from 'node:path';
import {
  formatSecretsKeys,
  parseSecretsKeys,
  rotateSecretsKeyFile,
  withNewKey,
} from '../src/auth/secrets-keys.ts';
import { keyId } from '../src/storage/secret-box.ts';

const configured = process.env.SECRETS_KEY;
try {
  if (configured !== undefined && configured !== '') {
    const ring = withNewKey(parseSecretsKeys(configured));
    process.stdout.write(
      `New secrets key ${keyId(ring.current)} in front of ${ring.previous.length} older key(s).\n` +
        'Set this on every process of the deployment, then restart them:\n\n' +
        `SECRETS_KEY=${formatSecretsKeys(ring, ',')}\n`,
    );
  } else {
    const keys = path.resolve(process.env.DATA_DIR ?? './data', 'keys');
    const ring = await rotateSecretsKeyFile(keys);
    process.stdout.write(
      `New secrets key ${keyId(ring.current)} written in front of ${ring.previous.length} older key(s) in ${keys}.\n` +
        'Restart every process of the deployment to seal with it.\n',
    );
  }
} catch (error) {
  process.stderr.write(
    `rotation refused: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
