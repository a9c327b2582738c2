/**
 * Docs name files that exist. Every file a document names, in code spans (`src/app.ts`,
 * `pacer.ts`) or as a link target, must be in the repository: a path by its path from the
 * root (or from the document's folder), a bare file name by some file of that name. The
 * source's comments are held to it too, for the paths they spell out from the root.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Folders a document's paths start from; a code span starting otherwise is not a path. */
const TOP = ['src', 'test', 'docs', 'scripts', 'examples', 'bench', 'packages', '.ci'];
/** What a file's name ends with, for a bare name in a code span to count as a file. */
const FILE = /^[\w.-]+\.(?:ts|js|md|lua|sql|json|css|html|svg|yml|yaml)$/;
/** Folders never walked: installed and generated trees. */
const SKIP = new Set(['node_modules', '.git', 'dist', 'coverage']);

/** Every file of the repository, relative to its root. */
async function repoFiles(dir = ROOT): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await repoFiles(full)));
    else files.push(path.relative(ROOT, full));
  }
  return files;
}

/**
 * The documents held to the rule: every README.md (the project's, the examples', the
 * client package's) and every Markdown file under docs/.
 */
function documents(files: readonly string[]): string[] {
  return files.filter(
    (file) =>
      path.basename(file) === 'README.md' || (file.startsWith('docs/') && file.endsWith('.md')),
  );
}

/** The file names a Markdown text names: code spans that look like paths, and link targets. */
function namedPaths(markdown: string): string[] {
  const named: string[] = [];
  for (const [, span = ''] of markdown.matchAll(/`([^`\n]+)`/g)) {
    // `src/storage/redis/cluster*.test.ts`, `<file>-appended`: patterns, not files.
    if (/[*<>{}\s]/.test(span)) continue;
    const bare = span.replace(/[:#].*$/, '').replace(/\/$/, '');
    const top = bare.split('/')[0] ?? '';
    if (TOP.includes(top) && bare.includes('/')) named.push(bare);
    else if (FILE.test(bare)) named.push(bare);
  }
  for (const [, target = ''] of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:|^#/.test(target)) continue;
    named.push(`./${target.replace(/#.*$/, '').replace(/\/$/, '')}`);
  }
  return named;
}

/** Whether `name`, named in `document`, is a file or folder of the repository. */
function exists(name: string, document: string, files: readonly string[]): boolean {
  const here = path.dirname(document);
  const candidates = name.startsWith('./')
    ? [path.normalize(path.join(here, name))]
    : [name, path.normalize(path.join(here, name))];
  for (const candidate of candidates) {
    if (files.includes(candidate) || files.some((file) => file.startsWith(`${candidate}/`)))
      return true;
  }
  // A bare file name stands for a file of that name anywhere.
  return !name.includes('/') && files.some((file) => path.basename(file) === name);
}

describe('the documents', () => {
  it('name only files that exist', async () => {
    const files = await repoFiles();
    const missing: string[] = [];
    for (const document of documents(files)) {
      const text = await readFile(path.join(ROOT, document), 'utf8');
      for (const name of namedPaths(text)) {
        if (!exists(name, document, files)) missing.push(`${document}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('are found: the rule reads the files it holds', async () => {
    const files = await repoFiles();
    expect(documents(files)).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/architecture.md',
        'examples/executor/README.md',
        'packages/client/README.md',
      ]),
    );
    expect(namedPaths('see `src/app.ts`, `pacer.ts` and [m](metrics.md)')).toEqual([
      'src/app.ts',
      'pacer.ts',
      './metrics.md',
    ]);
    expect(exists('src/no-such-file.ts', 'README.md', files)).toBe(false);
    expect(exists('no-such-file.ts', 'README.md', files)).toBe(false);
    expect(exists('pacer.ts', 'README.md', files)).toBe(true);
  });
});

describe('the source comments', () => {
  it('name only files that exist, where they spell a path from the root', async () => {
    const files = await repoFiles();
    const missing: string[] = [];
    const prefixes = TOP.join('|').replace('.', '\\.');
    const spelled = new RegExp(`(?<![\\w./-])(?:${prefixes})/[\\w./-]*[\\w-]`, 'g');
    for (const file of files.filter((f) => f.startsWith('src/') && f.endsWith('.ts'))) {
      const text = await readFile(path.join(ROOT, file), 'utf8');
      const comments = text.match(/\/\*[\s\S]*?\*\/|\/\/.*$/gm) ?? [];
      for (const comment of comments) {
        for (const [name] of comment.matchAll(spelled)) {
          if (/[*]/.test(name)) continue;
          if (!exists(name, file, files)) missing.push(`${file}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
