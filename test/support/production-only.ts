/**
 * A module-resolution hook for `node --import`: it makes every package that
 * `package-lock.json` marks `dev` unresolvable, as if `npm ci --omit=dev` had left it out
 *. A process started with it runs as a production install would: any
 * import of a dev-only package, static, dynamic or `require`, in our code or in a
 * dependency's, fails with `ERR_DEV_ONLY_PACKAGE` naming it.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { registerHooks } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '../..');
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean }>;
};
const devOnly = new Set(
  Object.entries(lock.packages)
    .filter(([, entry]) => entry.dev === true)
    .map(([key]) => key),
);
/** Where the installed packages really are (`node_modules` may be a link). */
const MODULES = `${realpathSync(path.join(ROOT, 'node_modules'))}${path.sep}`;

/** The lock key (`node_modules/a/node_modules/@b/c`) of the package a file belongs to. */
function packageOf(file: string): string | null {
  if (!file.startsWith(MODULES)) return null;
  const parts = file.slice(MODULES.length).split(path.sep);
  let key = 'node_modules';
  let found: string | null = null;
  for (let i = 0; i < parts.length;) {
    const name = parts[i]?.startsWith('@') === true ? `${parts[i]}/${parts[i + 1]}` : parts[i];
    key = `${key}/${name ?? ''}`;
    if (key in lock.packages) found = key;
    i += name?.includes('/') === true ? 2 : 1;
    if (parts[i] !== 'node_modules') break;
    key = `${key}/node_modules`;
    i += 1;
  }
  return found;
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (!resolved.url.startsWith('file:')) return resolved;
    const owner = packageOf(realpathSync(fileURLToPath(resolved.url)));
    if (owner !== null && devOnly.has(owner)) {
      const error = new Error(
        `${specifier} resolves into ${owner}, a dev dependency that a production install leaves out`,
      );
      Object.assign(error, { code: 'ERR_DEV_ONLY_PACKAGE' });
      throw error;
    }
    return resolved;
  },
});
