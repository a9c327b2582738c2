/**
 * The embedded service does not load what only some deployments use: the MCP SDK (and
 * ajv with it) until a tenant's MCP server is reached, the `undici` package until an
 * exchange sends, ioredis until `REDIS_URL` names a Redis. Together some 15 MB of RSS
 * (`docs/benchmarks.md`, "Idle").
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService } from './support/service-process.ts';

const TRACE = path.resolve(import.meta.dirname, 'support/package-trace.ts');
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function loadedAtStart(env: Record<string, string>): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'lazy-packages-'));
  dirs.push(dir);
  const trace = path.join(dir, 'packages.txt');
  const service = await startService(
    { DATA_DIR: path.join(dir, 'data'), PACKAGE_TRACE_FILE: trace, ...env },
    20_000,
    [`--import=${TRACE}`],
  );
  try {
    const health = await fetch(`${service.url}/health`);
    expect(health.status).toBe(200);
    return (await readFile(trace, 'utf8')).split('\n').filter((line) => line !== '');
  } finally {
    await service.stop();
  }
}

describe('the embedded service at start', () => {
  it('has loaded neither the MCP SDK, nor undici beyond its version, nor ioredis', async () => {
    const loaded = await loadedAtStart({});
    // The trace works: what the service needs from the start is in it.
    expect(loaded.some((file) => file.startsWith('fastify/'))).toBe(true);
    expect(loaded.filter((file) => file.startsWith('@modelcontextprotocol/sdk/'))).toEqual([]);
    expect(loaded.filter((file) => file.startsWith('undici/'))).toEqual(['undici/package.json']);
    expect(loaded.filter((file) => file.startsWith('ioredis/'))).toEqual([]);
  });

  it('loads ioredis when REDIS_URL names a Redis', async () => {
    const url = process.env.TEST_REDIS_URL;
    if (url === undefined || url === '') throw new Error('TEST_REDIS_URL is not set');
    const loaded = await loadedAtStart({ REDIS_URL: url });
    expect(loaded.some((file) => file.startsWith('ioredis/'))).toBe(true);
  });
});
