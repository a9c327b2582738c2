/**
 * A production install (`npm ci --omit=dev`) runs the service. Every
 * package `src/` imports is a dependency, not a dev dependency; and the service started
 * with every dev-only package made unresolvable (`support/production-only.ts`) serves its
 * pages and the whole quickstart.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { startService } from './support/service-process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const HOOK = path.join(ROOT, 'test/support/production-only.ts');

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** Every package `src/` loads: imports, re-exports, dynamic imports and resolved paths. */
async function packagesOfSrc(): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  const files = (await readdir(path.join(ROOT, 'src'), { recursive: true }))
    .filter((file) => /\.(ts|js)$/.test(file))
    .map((file) => path.join('src', file));
  for (const file of files) {
    const source = await readFile(path.join(ROOT, file), 'utf8');
    const specifiers = ts
      .preProcessFile(source, true, true)
      .importedFiles.map((imported) => imported.fileName);
    // Files a module reads from a package (`createRequire(…).resolve('oauth4webapi')`).
    for (const match of source.matchAll(/\.resolve\('([^'.][^']*)'\)/g)) {
      if (match[1] !== undefined) specifiers.push(match[1]);
    }
    for (const specifier of specifiers) {
      if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
      if (builtinModules.includes(specifier)) continue;
      const name = packageName(specifier);
      found.set(name, [...(found.get(name) ?? []), file]);
    }
  }
  return found;
}

describe('a production install', () => {
  it('has every package src/ imports among the dependencies', async () => {
    const manifest = async (folder: string) =>
      JSON.parse(await readFile(path.join(ROOT, folder, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
    // A production install keeps the dependencies of the root and of its workspaces (the
    // client package, whose openapi-fetch the pages are served).
    const kept = new Set(Object.keys((await manifest('.')).dependencies ?? {}));
    for (const name of Object.keys((await manifest('packages/client')).dependencies ?? {}))
      kept.add(name);
    const used = await packagesOfSrc();
    // The walk sees what it must: the web framework, and the pages' clients.
    expect([...used.keys()]).toEqual(
      expect.arrayContaining(['fastify', 'oauth4webapi', 'openapi-fetch', 'zod']),
    );
    const missing = [...used].filter(([name]) => !kept.has(name));
    expect(missing).toEqual([]);
  });

  it('runs without dev dependencies: pages, documents and the whole quickstart', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'production-'));
    const service = await startService({ DATA_DIR: dataDir }, 20_000, ['--import', HOOK]);
    try {
      for (const page of [
        '/openapi.json',
        '/docs/',
        '/docs/js/scalar.js',
        '/consent/oauth4webapi.js',
        '/console',
        '/console/oauth4webapi.js',
        '/console/statecharts/turn',
        '/consent/client/index.ts',
        '/consent/client/openapi-fetch.js',
        '/console/client/index.ts',
        '/console/client/openapi-fetch.js',
      ]) {
        const response = await fetch(`${service.url}${page}`);
        expect([page, response.status]).toEqual([page, 200]);
      }
      const operator = /(op_\S+)/.exec(service.stderr())?.[1] ?? '';
      const child = spawn(
        process.execPath,
        ['--disable-warning=ExperimentalWarning', 'examples/quickstart.ts'],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', BASE_URL: service.url, OPERATOR_TOKEN: operator },
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
      expect(service.stderr()).not.toContain('ERR_DEV_ONLY_PACKAGE');
    } finally {
      await service.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('is what the hook makes of a process: a dev-only package does not load', async () => {
    const child = spawn(
      process.execPath,
      ['--import', HOOK, '--input-type=module', '-e', "await import('vitest')"],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).not.toBe(0);
    expect(stderr).toContain('vitest resolves into node_modules/vitest, a dev dependency');
  });
});
