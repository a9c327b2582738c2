/**
 * End to end: `npm run secrets:rotate` on a service's data folder. A
 * secret stored before the rotation stays readable (the same value reads as unchanged,
 * and it still opens: the service sends it to an MCP server as a connection's bearer), one
 * stored after is sealed under the new key, and the rotated ring is kept owner-only. The
 * service runs as `npm start` does, and is reached over HTTP.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSecretsKeys } from '../../src/auth/secrets-keys.ts';
import { keyId } from '../../src/storage/secret-box.ts';
import { SQLITE_FILE } from '../../src/storage/sql/open.ts';
import { LOOPBACK_PEERS } from '../support/egress.ts';
import { startService } from '../support/service-process.ts';
import { sampleTools, startPagingServer } from '../mcp/peers/paging.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const OPERATOR_TOKEN = randomBytes(32).toString('base64url');
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Runs a script of the project with `env`; answers its exit code and output. */
function run(script: string, env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', path.join(ROOT, script)],
    {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, output: () => output, exit };
}

/** Starts the service on `dataDir`; answers a caller of its API and a way to stop it. */
async function service(dataDir: string) {
  // The MCP server the secrets are sent to listens on loopback.
  const running = await startService({
    DATA_DIR: dataDir,
    OPERATOR_TOKEN,
    EGRESS_ALLOW: LOOPBACK_PEERS,
  });
  const call = async (method: string, url: string, token: string, body?: unknown) => {
    const response = await fetch(`${running.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const stop = async () => {
    await running.stop();
    expect(await running.exit).toBe(0);
  };
  return { call, stop };
}

describe('npm run secrets:rotate on a data folder', () => {
  it('seals new secrets under the new key while the old ones stay readable', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rotate-'));
    dirs.push(dataDir);
    const first = await service(dataDir);
    const signIn = async (svc: typeof first) =>
      String(
        (await svc.call('POST', '/console/token', OPERATOR_TOKEN, { user: 'ada', tenant: 'acme' }))
          .body.token,
      );
    let token = await signIn(first);
    expect((await first.call('PUT', '/console/tenant', token, { name: 'Acme' })).status).toBe(201);
    expect(
      (await first.call('PUT', '/secrets/before', token, { value: 'old-secret-value' })).status,
    ).toBe(201);
    await first.stop();

    const keysFile = path.join(dataDir, 'keys', 'secrets.key');
    const oldRing = parseSecretsKeys(await readFile(keysFile, 'utf8'));
    const rotation = run('scripts/rotate-secrets-key.ts', { DATA_DIR: dataDir });
    expect(await rotation.exit, rotation.output()).toBe(0);
    const ring = parseSecretsKeys(await readFile(keysFile, 'utf8'));
    expect(ring.previous).toEqual([oldRing.current]);
    expect(rotation.output()).toContain(keyId(ring.current));
    expect(rotation.output()).not.toContain(ring.current.toString('base64url'));
    expect((await stat(keysFile)).mode & 0o777).toBe(0o600);

    const second = await service(dataDir);
    token = await signIn(second);
    // The old value is recognised under the old key: unchanged, nothing rewritten.
    const again = await second.call('PUT', '/secrets/before', token, { value: 'old-secret-value' });
    expect(again).toMatchObject({ status: 200, body: { outcome: 'unchanged' } });
    expect(
      (await second.call('PUT', '/secrets/after', token, { value: 'new-secret-value' })).status,
    ).toBe(201);
    // Both open under the ring: the service sends each as the bearer an MCP server demands.
    const server = await startPagingServer(sampleTools(1), 10);
    try {
      for (const [name, value] of [
        ['before', 'old-secret-value'],
        ['after', 'new-secret-value'],
      ] as const) {
        server.requireBearer(value);
        const linked = await second.call('PUT', `/connections/${name}`, token, {
          name,
          endpoint: server.endpoint,
          credential: name,
        });
        expect(linked, name).toMatchObject({
          status: 201,
          body: { connection: { state: 'linked' } },
        });
      }
    } finally {
      await server.close();
    }
    await second.stop();

    // At rest: each value names the key it was sealed under.
    const db = new DatabaseSync(path.join(dataDir, SQLITE_FILE));
    const rows = db.prepare('SELECT name, sealed FROM secret_values ORDER BY name').all() as {
      name: string;
      sealed: string;
    }[];
    db.close();
    expect(rows.map((row) => [row.name, row.sealed.split('.')[0]])).toEqual([
      ['after', keyId(ring.current)],
      ['before', keyId(oldRing.current)],
    ]);
  }, 90_000);

  it('prints the new ring for SECRETS_KEY, writing nothing, when the keys live in the environment', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rotate-env-'));
    dirs.push(dataDir);
    const old = Buffer.alloc(32, 7).toString('base64url');
    const rotation = run('scripts/rotate-secrets-key.ts', { DATA_DIR: dataDir, SECRETS_KEY: old });
    expect(await rotation.exit).toBe(0);
    const line = /^SECRETS_KEY=(\S+)$/m.exec(rotation.output())?.[1] ?? '';
    const ring = parseSecretsKeys(line);
    expect(ring.previous.map((key) => key.toString('base64url'))).toEqual([old]);
    await expect(stat(path.join(dataDir, 'keys'))).rejects.toThrow();
  });
});
