/**
 * A module-resolution hook for `node --import`: it writes `otel-module <package>` to
 * stderr the first time the process resolves a module of an `@opentelemetry/` package,
 * so a test can tell which of them a service process loaded (the API only, or the SDK).
 */
import { registerHooks } from 'node:module';

const seen = new Set<string>();

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    const match = /node_modules\/(@opentelemetry\/[^/]+)\//.exec(resolved.url);
    const name = match?.[1];
    if (name !== undefined && !seen.has(name)) {
      seen.add(name);
      process.stderr.write(`otel-module ${name}\n`);
    }
    return resolved;
  },
});
