/**
 * `npm start` preloads `src/compile-cache.js`, which turns on Node's module compile cache:
 * a service started again from the same files takes its modules' stripped text from the
 * cache and never loads Node's TypeScript stripper, some 18 MB it would hold for its
 * whole life (`docs/benchmarks.md`, "Idle"). The typed client the pages import is
 * stripped by a child process on first request, so serving it loads no stripper either.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from './support/service-process.ts';
import { tracedRun, type Trace } from './support/traced-service.ts';

const STRIPPER: Trace = {
  preload: path.resolve(import.meta.dirname, 'support/stripper-trace.js'),
  variable: 'STRIPPER_TRACE_FILE',
};
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Runs `use` on a service started as `npm start` starts it; answers whether it loaded the stripper. */
async function loadedStripper(
  env: Record<string, string>,
  use?: (service: ServiceProcess) => Promise<void>,
): Promise<boolean> {
  return JSON.parse(await tracedRun(STRIPPER, env, use)) as boolean;
}

async function emptyCache(): Promise<string> {
  const cache = await mkdtemp(path.join(tmpdir(), 'compile-cache-dir-'));
  dirs.push(cache);
  return cache;
}

describe('the compile cache', () => {
  it('spares a restarted service the TypeScript stripper', async () => {
    const cache = await emptyCache();
    // NODE_COMPILE_CACHE names a folder of the test's own, empty: the first start fills it.
    expect(await loadedStripper({ NODE_COMPILE_CACHE: cache })).toBe(true);
    expect(await loadedStripper({ NODE_COMPILE_CACHE: cache })).toBe(false);
  });

  it('is filled once the service listens, so a service killed then restarts warm', async () => {
    const cache = await emptyCache();
    const dir = await mkdtemp(path.join(tmpdir(), 'compile-cache-'));
    dirs.push(dir);
    const killed = await startService({ DATA_DIR: dir, NODE_COMPILE_CACHE: cache });
    await killed.kill();
    expect(await loadedStripper({ NODE_COMPILE_CACHE: cache })).toBe(false);
  });

  it('is kept in the service folder by default, and serves the client without a stripper', async () => {
    // Started twice: whatever ran before, the second start finds the first one's cache.
    await loadedStripper({});
    const loaded = await loadedStripper({}, async (service) => {
      const answer = await fetch(`${service.url}/console/client/index.ts`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const script = await answer.text();
      expect(script).toContain('export');
      // Types stripped: they become whitespace, so the line count is the source's.
      const source = await readFile(
        path.resolve(import.meta.dirname, '../packages/client/src/index.ts'),
        'utf8',
      );
      expect(script.split('\n')).toHaveLength(source.split('\n').length);
      expect(script).not.toMatch(/^export type /m);
    });
    expect(loaded).toBe(false);
  });
});
