/**
 * The embedded service does not load what only some deployments use: the MCP SDK (and
 * ajv with it) until a tenant's MCP server is reached, the `undici` package until an
 * exchange sends, ioredis until `REDIS_URL` names a Redis. Together some 15 MB of RSS
 * (`docs/benchmarks.md`, "Idle").
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tracedRun, type Trace } from './support/traced-service.ts';

const PACKAGES: Trace = {
  preload: path.resolve(import.meta.dirname, 'support/package-trace.ts'),
  variable: 'PACKAGE_TRACE_FILE',
};

async function loadedAtStart(env: Record<string, string>): Promise<string[]> {
  const trace = await tracedRun(PACKAGES, env, async (service) => {
    const health = await fetch(`${service.url}/health`);
    expect(health.status).toBe(200);
  });
  return trace.split('\n').filter((line) => line !== '');
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
