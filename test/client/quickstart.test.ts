/**
 * Issue 16 item 7: the package README's quickstart is `packages/client/examples/
 * quickstart.ts`, shown there exactly, and it runs as written (`node` in a child process,
 * importing the package by its name) against the real service, embedded default: the
 * owner's consent goes through the real consent route, as the consent page sends it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = 'packages/client/examples/quickstart.ts';

let harness: TestApp;
let base: string;
beforeAll(async () => {
  harness = await startTestApp();
  base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await harness.close();
});

/** Runs the script as the README says; answers its exit code and output. */
async function quickstart(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', SCRIPT], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('the client quickstart', () => {
  it('runs as written: propose, consent, open, append, tail, archive', async () => {
    const operator = harness.keys.generatedOperatorToken ?? '';
    const run = await quickstart({ BASE_URL: base, OPERATOR_TOKEN: operator });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^proposed; the owner's consent page is http:\/\/\S+\/consent\/rq_/);
    expect(lines[1]).toMatch(/^consented: install in_[0-9a-f]{32}$/);
    const opened = /^opened session ([0-9a-f]{72})$/.exec(lines[2] ?? '')?.[1];
    expect(opened).toBeDefined();
    expect(lines.slice(3, -1).map((line) => line.trim().split(' ')[1])).toEqual([
      'session.opened',
      'message.submitted:',
      'turn.started',
      'model.output:',
      'turn.ended',
    ]);
    expect(lines.at(-1)).toBe(`archived session ${opened ?? ''}`);

    // Again on the same service: the tenant and the option exist, a new app is installed.
    const again = await quickstart({ BASE_URL: base, OPERATOR_TOKEN: operator });
    expect([again.code, again.stderr]).toEqual([0, '']);
  }, 60_000);

  it('stops with the service’s problem when a call is refused', async () => {
    const run = await quickstart({ BASE_URL: base, OPERATOR_TOKEN: 'op_wrong' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('ServiceProblem');
    expect(run.stderr).toContain('status: 401');
  });

  it('is shown in the package README exactly as it is in examples/', async () => {
    const [readme, script] = await Promise.all([
      readFile(path.join(ROOT, 'packages/client/README.md'), 'utf8'),
      readFile(path.join(ROOT, SCRIPT), 'utf8'),
    ]);
    expect(readme).toContain(`\`\`\`ts\n${script}\`\`\``);
  });
});
