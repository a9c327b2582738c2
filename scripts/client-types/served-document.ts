/**
 * The OpenAPI document exactly as the service serves it: the app is built in-process with
 * the default configuration (embedded SQLite in a temp folder, no Redis, the operator
 * grant), `GET /openapi.json` is injected, and everything is closed again. No port opens.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadKeyMaterial } from '../../src/auth/key-material.ts';
import { TokenService } from '../../src/auth/tokens.ts';
import { systemClock, systemEntropy } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { openStores } from '../../src/storage/open.ts';

/** `GET /openapi.json` of a default build, parsed. */
export async function servedDocument(): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'client-types-'));
  const shutdown = new AbortController();
  try {
    const config = parseConfig({ DATA_DIR: dataDir }, dataDir);
    const keys = await loadKeyMaterial({
      dataDir,
      signingKeyPem: undefined,
      secretsKey: undefined,
      operatorToken: undefined,
    });
    const stores = await openStores({
      dataDir,
      databaseUrl: undefined,
      redisUrl: undefined,
      secretsKey: keys.secretsKeyring,
      clock: systemClock,
    });
    const app = await buildApp({
      baseUrl: config.baseUrl,
      bodyLimit: config.bodyLimit,
      rateLimits: config.rateLimits,
      logger: createLogger({ level: 'silent' }),
      logStore: stores.log,
      controlStore: stores.control,
      workStore: stores.work,
      turns: {
        leaseMs: config.leaseMs,
        sweepMs: config.turnSweepMs,
        idleArchiveMs: config.sessionIdleArchiveMs,
      },
      tokens: new TokenService(keys.signing, config.baseUrl, systemClock),
      clock: systemClock,
      entropy: systemEntropy,
      operatorTokenHash: keys.operatorTokenHash,
      consoleOidc: undefined,
      shutdown: shutdown.signal,
      sealKey: keys.secretsKey,
      egressAllow: config.egressAllow,
    });
    try {
      const response = await app.inject({ method: 'GET', url: '/openapi.json' });
      if (response.statusCode !== 200)
        throw new Error(`GET /openapi.json answered ${response.statusCode}`);
      return response.json<Record<string, unknown>>();
    } finally {
      shutdown.abort();
      // The app owns the services; closing it closes them, then the stores go.
      await app.close();
      await stores.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
