/**
 * The Node flags `npm start` runs the service with, read from package.json's `start`
 * script, so that the tests and benches that start the service as a process (and the
 * bench's in-process server) run it with the same engine settings as a deployment.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Manifest {
  readonly scripts: { readonly start: string };
}

function startFlags(): string[] {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as Manifest;
  const words = manifest.scripts.start.split(/\s+/);
  const node = words.indexOf('node');
  const main = words.indexOf('src/main.ts');
  if (node === -1 || main <= node) {
    throw new Error(
      `package.json's start script is not "node <flags> src/main.ts": ${words.join(' ')}`,
    );
  }
  // A preload named from the project's root (`--import=./src/…`) is found from any folder.
  return words
    .slice(node + 1, main)
    .map((flag) =>
      flag.replace(
        /^(--import=)(\.\/.*)$/,
        (_, name: string, file: string) =>
          name + fileURLToPath(new URL(`../../${file}`, import.meta.url)),
      ),
    );
}

/**
 * For example `--max-semi-space-size=8 --disable-warning=ExperimentalWarning
 * --import=/…/src/compile-cache.js`.
 */
export const START_FLAGS: readonly string[] = startFlags();
