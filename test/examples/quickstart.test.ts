/**
 * README's quickstart is `examples/quickstart.ts`,
 * written on the client package, and it runs as written: `npm start` in a child process
 * (a fresh data folder, the embedded default), then the script with the operator token
 * that start printed, as `npm run quickstart` runs it; the owner's consent goes through
 * the real consent route. README and the package's README show the script exactly, so
 * they cannot drift apart.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from '../support/service-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'examples/quickstart.ts');

let service: ServiceProcess | undefined;
let dataDir: string | undefined;
afterAll(async () => {
  await service?.stop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

/** Runs the script as `npm run quickstart` does; answers its exit code and output. */
async function quickstart(env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', 'examples/quickstart.ts'],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('the quickstart', () => {
  it('runs as written against a started service: propose, consent, open, send, tail, archive', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'quickstart-'));
    service = await startService({ DATA_DIR: dataDir });
    const operator = /Operator token \(shown once, keep it safe\): (op_\S+)/.exec(
      service.stderr(),
    )?.[1];
    expect(operator).toBeDefined();

    const run = await quickstart({ BASE_URL: service.url, OPERATOR_TOKEN: operator ?? '' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^proposed; the owner's consent page is ${service.url}/consent/rq_[0-9a-f]{32}$`),
    );
    expect(lines[1]).toMatch(/^consented: install in_[0-9a-f]{32}$/);
    const opened = /^opened session ([0-9a-f]{72})$/.exec(lines[2] ?? '')?.[1];
    expect(opened).toBeDefined();
    // The tail, as the principal sees it, through the end of the turn.
    expect(lines.slice(3, -1).map((line) => line.trim().split(' ')[1])).toEqual([
      'session.opened',
      'message.submitted:',
      'turn.started',
      'model.output:',
      'turn.ended',
    ]);
    expect(lines.at(-1)).toBe(`archived session ${opened ?? ''}`);

    // Run again on the same service: the tenant and the option exist, a new app is installed.
    const again = await quickstart({ BASE_URL: service.url, OPERATOR_TOKEN: operator ?? '' });
    expect([again.code, again.stderr]).toEqual([0, '']);
  }, 90_000);

  it('stops with the service’s problem when a call is refused', async () => {
    if (service === undefined) throw new Error('the service did not start');
    const run = await quickstart({ BASE_URL: service.url, OPERATOR_TOKEN: 'op_wrong' });
    expect(run.code).not.toBe(0);
    // The client throws the refusal as a ServiceProblem with the problem body's members.
    expect(run.stderr).toContain('ServiceProblem');
    expect(run.stderr).toContain('status: 401');
  }, 30_000);

  it('is shown in README and the client package’s README exactly as it is in examples/', async () => {
    const [readme, packageReadme, script] = await Promise.all([
      readFile(path.join(ROOT, 'README.md'), 'utf8'),
      readFile(path.join(ROOT, 'packages/client/README.md'), 'utf8'),
      readFile(SCRIPT, 'utf8'),
    ]);
    for (const shown of [readme, packageReadme]) {
      expect(shown).toContain(`\`\`\`ts\n${script}\`\`\``);
      expect(shown).toContain('npm run quickstart');
    }
  });
});
