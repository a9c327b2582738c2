/**
 * The checks of `npm run check` that keep the house in order can fail: dependency-cruiser
 * with the layers of docs/architecture.md (`.dependency-cruiser.mjs`), knip
 * (`knip.json`) and ESLint's `max-lines` (`eslint.config.js`), each run with the
 * project's own configuration on a small tree made for the purpose, which holds an import
 * cycle, an upward import, I/O in a machine, a dev-only package in `src/`, an unused export
 * and a file over the limit; and the real tree passes the same configuration.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const KNIP = path.join(ROOT, 'node_modules/knip/bin/knip.js');

interface Run {
  readonly code: number;
  readonly out: string;
}

/** Runs a check's CLI with this Node in `cwd`; answers its exit code and output. */
async function run(cwd: string, script: string, args: readonly string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [script, ...args], {
      cwd,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, out: (failed.stdout ?? '') + (failed.stderr ?? '') };
  }
}

const depcruise = (cwd: string) =>
  run(cwd, DEPCRUISE, [
    'src',
    '--config',
    path.join(ROOT, '.dependency-cruiser.mjs'),
    '--output-type',
    'err',
  ]);
const knip = (cwd: string) =>
  run(cwd, KNIP, ['--config', path.join(ROOT, 'knip.json'), '--reporter', 'compact']);

/** ESLint's `max-lines` alone, under the project's config, on `files` of `cwd`. */
async function maxLines(cwd: string, files: readonly string[]): Promise<ESLint.LintResult[]> {
  const eslint = new ESLint({
    cwd,
    overrideConfigFile: path.join(ROOT, 'eslint.config.js'),
    // Only the length is checked here, so the files need no type information.
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
    ruleFilter: ({ ruleId }) => ruleId === 'max-lines',
  });
  return eslint.lintFiles([...files]);
}

/** A tree with one defect of each kind; `src/main.ts` is its entry. */
const DEFECTS: Readonly<Record<string, string>> = {
  'package.json': JSON.stringify({
    name: 'house-fixture',
    private: true,
    type: 'module',
    scripts: { start: 'node src/main.ts' },
    devDependencies: { vitest: '*' },
  }),
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      allowImportingTsExtensions: true,
      noEmit: true,
      strict: true,
    },
    include: ['src'],
  }),
  'src/main.ts': [
    "import { chart } from './machines/chart.ts';",
    "import { LONG } from './policy/long.ts';",
    'console.log(chart, LONG);',
  ].join('\n'),
  // An upward import: a pure machine that reaches into storage; and I/O in a machine.
  'src/machines/chart.ts': [
    "import { readFileSync } from 'node:fs';",
    "import { stored } from '../storage/store.ts';",
    'export const chart = [stored, readFileSync];',
    // An unused export: nothing imports it and nothing in the file uses it.
    'export const forgotten = 1;',
  ].join('\n'),
  // An import cycle: store and ring import each other; and a dev-only package in src/.
  'src/storage/store.ts': [
    "import { expect } from 'vitest';",
    "import { ring } from './ring.ts';",
    'export const stored = expect(ring + 1);',
  ].join('\n'),
  'src/storage/ring.ts': [
    "import { stored } from './store.ts';",
    'export const ring = 1;',
    'console.log(stored);',
  ].join('\n'),
  // A file of 301 lines, one over the limit of src/.
  'src/policy/long.ts': [
    'export const LONG = [',
    ...Array.from({ length: 299 }, (_, i) => `  ${i},`),
    '];',
  ].join('\n'),
};

let fixture: string;
beforeAll(async () => {
  fixture = await mkdtemp(path.join(tmpdir(), 'house-checks-'));
  await symlink(path.join(ROOT, 'node_modules'), path.join(fixture, 'node_modules'));
  for (const [file, text] of Object.entries(DEFECTS)) {
    await mkdir(path.dirname(path.join(fixture, file)), { recursive: true });
    await writeFile(path.join(fixture, file), `${text}\n`);
  }
});
afterAll(async () => {
  await rm(fixture, { recursive: true, force: true });
});

describe('the checks of npm test', () => {
  it('dependency-cruiser reports the import cycle, the upward import, I/O in a machine and a dev-only package', async () => {
    const { code, out } = await depcruise(fixture);
    expect(code).not.toBe(0);
    expect(out).toMatch(
      /no-cycle: src\/storage\/(store|ring)\.ts →\s+src\/storage\/(ring|store)\.ts/,
    );
    expect(out).toContain('pure-core: src/machines/chart.ts → src/storage/store.ts');
    expect(out).toContain('pure-no-io: src/machines/chart.ts → fs');
    expect(out).toMatch(
      /src-no-dev-dependency: src\/storage\/store\.ts → \S*node_modules\/vitest\//,
    );
  });

  it('knip reports the unused export', async () => {
    const { code, out } = await knip(fixture);
    expect(code).not.toBe(0);
    expect(out).toContain('Unused exports (1)\nsrc/machines/chart.ts: forgotten\n');
  });

  it('max-lines reports the file over the limit, and only it', async () => {
    const results = await maxLines(fixture, ['src']);
    const long = results.filter((result) => result.messages.length > 0);
    expect(long.map((result) => path.relative(fixture, result.filePath))).toEqual([
      'src/policy/long.ts',
    ]);
    expect(long[0]?.messages[0]?.message).toMatch(/Maximum allowed is 300/);
  });

  it('pass on the real tree', async () => {
    const [cruised, knipped] = await Promise.all([
      run(ROOT, DEPCRUISE, [
        'src',
        'test',
        'scripts',
        'bench',
        'examples',
        '--config',
        '.dependency-cruiser.mjs',
        '--output-type',
        'err',
      ]),
      run(ROOT, KNIP, ['--reporter', 'compact']),
    ]);
    expect(cruised).toMatchObject({ code: 0 });
    expect(knipped).toMatchObject({ code: 0 });
    const long = (await maxLines(ROOT, ['src', 'test', 'scripts', 'bench', 'examples'])).filter(
      (result) => result.messages.length > 0,
    );
    expect(long.map((result) => path.relative(ROOT, result.filePath))).toEqual([]);
  }, 120_000);
});
