/**
 * A preload (`--import`) that lists, in the file `PACKAGE_TRACE_FILE` names, every file of
 * an installed package the process resolves, as its path under `node_modules/`, one per
 * line, as it is resolved: what a process has loaded from its dependencies so far.
 */
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const file = process.env.PACKAGE_TRACE_FILE;
if (file !== undefined) {
  const seen = new Set<string>();
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      const under = /\/node_modules\/(.+)$/.exec(resolved.url)?.[1];
      if (under !== undefined && !seen.has(under)) {
        seen.add(under);
        appendFileSync(file, `${under}\n`);
      }
      return resolved;
    },
  });
}
