import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { START_FLAGS } from './support/start-flags.ts';

const MAIN = path.resolve(import.meta.dirname, '../src/main.ts');
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
  });
}

interface Running {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly exit: Promise<number | null>;
}

function start(env: Record<string, string>): Running {
  const child = spawn(process.execPath, [...START_FLAGS, MAIN], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  return { child, stderr: () => stderr, exit };
}

/** Resident memory of a process in MB, from /proc (Linux). */
async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) / 1024;
}

async function healthyWithin(url: string, ms: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      const response = await fetch(`${url}/health`);
      if (response.status === 200) return Date.now() - started;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > ms) throw new Error(`no healthy answer within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The human line of a start, once it is written (just after `listen`). */
async function readyLineOf(run: Running): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const line = run
      .stderr()
      .split('\n')
      .find((l) => l.startsWith('Agent session service ready at '));
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ready line in: ${run.stderr()}`);
}

describe('npm start on the embedded default', () => {
  it('serves /health within 15 s, stops on SIGTERM with 0, and keeps its data across a restart', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'main-'));
    dirs.push(dataDir);
    const port = await freePort();
    const env = { PORT: String(port), DATA_DIR: dataDir };
    const url = `http://127.0.0.1:${port}`;

    const first = start(env);
    expect(await healthyWithin(url, 15_000)).toBeLessThan(15_000);
    expect(first.stderr()).toMatch(/Operator token \(shown once, keep it safe\): op_/);
    // One plain line says where to go, where the data is, and the token.
    const ready = await readyLineOf(first);
    expect(ready).toContain(`ready at ${url}`);
    expect(ready).toContain(`docs ${url}/docs`);
    expect(ready).toContain(`console ${url}/docs#tag/console`);
    expect(ready).toContain(`data ${dataDir} (sqlite)`);
    expect(ready).toContain('operator token: printed above, shown once');
    const key = await readFile(path.join(dataDir, 'keys', 'signing.pem'), 'utf8');
    // Store something through the API: a tenant, created with the operator grant.
    const operator = /Operator token \(shown once, keep it safe\): (op_\S+)/.exec(
      first.stderr(),
    )?.[1];
    const signIn = async () => {
      const response = await fetch(`${url}/console/token`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operator ?? ''}`, 'content-type': 'application/json' },
        body: JSON.stringify({ user: 'ada', tenant: 'acme' }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { token: string }).token;
    };
    const created = await fetch(`${url}/console/tenant`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await signIn()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Acme' }),
    });
    expect(created.status).toBe(201);
    // The embedded service idles under 200 MB of resident memory.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await residentMb(first.child.pid ?? 0)).toBeLessThan(200);
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);

    const second = start(env);
    await healthyWithin(url, 15_000);
    expect(second.stderr()).not.toContain('Operator token');
    // The second start says how to get a new token: the file to delete (README says it too).
    expect(await readyLineOf(second)).toContain(
      `delete ${path.join(dataDir, 'keys', 'operator-token.sha256')} and start again`,
    );
    expect(await readFile(path.join(dataDir, 'keys', 'signing.pem'), 'utf8')).toBe(key);
    // The operator token printed on the first start still signs in, and the tenant is there.
    const memberships = await fetch(`${url}/console/memberships`, {
      headers: { authorization: `Bearer ${await signIn()}` },
    });
    expect(memberships.status).toBe(200);
    expect(await memberships.json()).toEqual([{ tenant: 'acme', role: 'owner' }]);
    second.child.kill('SIGINT');
    expect(await second.exit).toBe(0);
  }, 45_000);

  it('hands back what start-up grew once it is quiet: V8 reduces its memory within 30 s', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'main-'));
    dirs.push(dataDir);
    const port = await freePort();
    const run = start({ PORT: String(port), DATA_DIR: dataDir });
    await healthyWithin(`http://127.0.0.1:${port}`, 15_000);
    const pid = run.child.pid ?? 0;
    // Start-up leaves V8's young generation grown and the pages it freed in V8's pool; the
    // memory reducer that src/main.ts arms hands them back some 8 s after it went quiet
    // (without it the process stayed at its start-up RSS for 40 s and more).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const started = await residentMb(pid);
    let now = started;
    for (let waited = 0; waited < 30_000 && now > started - 10; waited += 500) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      now = await residentMb(pid);
    }
    expect(now).toBeLessThan(started - 10);
    run.child.kill('SIGTERM');
    expect(await run.exit).toBe(0);
  }, 50_000);

  it('creates its data folder, keys and database readable by the owner only', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'main-modes-'));
    dirs.push(parent);
    const dataDir = path.join(parent, 'data');
    const port = await freePort();
    const run = start({ PORT: String(port), DATA_DIR: dataDir });
    await healthyWithin(`http://127.0.0.1:${port}`, 15_000);
    const mode = async (name: string) =>
      ((await stat(path.join(dataDir, name))).mode & 0o777).toString(8);
    expect(await mode('.')).toBe('700');
    expect(await mode('keys')).toBe('700');
    for (const file of ['keys/signing.pem', 'keys/secrets.key', 'service.sqlite']) {
      expect([file, await mode(file)]).toEqual([file, '600']);
    }
    // SQLite's own files take the database file's mode (the folder is closed to others
    // anyway, so nothing else in it is reachable by them).
    const sqliteOwn = /^service\.sqlite-(wal|shm|journal)$/;
    const own = (await readdir(dataDir)).filter((name) => sqliteOwn.test(name));
    expect(own).toEqual(expect.arrayContaining(['service.sqlite-wal', 'service.sqlite-shm']));
    for (const file of own) {
      expect([file, await mode(file)]).toEqual([file, '600']);
    }
    run.child.kill('SIGTERM');
    expect(await run.exit).toBe(0);
  }, 30_000);

  it.each([
    ['PORT', 'eighty'],
    ['DATABASE_URL', 'mysql://db/x'],
    ['LOG_LEVEL', 'loud'],
  ])('refuses to start with a bad %s, naming it', async (variable, value) => {
    const run = start({ [variable]: value, DATA_DIR: path.join(tmpdir(), 'never-created') });
    expect(await run.exit).toBe(78);
    const lines = run.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^start-up refused: ${variable}: `));
  });
});
