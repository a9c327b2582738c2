/**
 * Docs name files that exist: every path of this repository that README.md, docs/ or an
 * example's README names in code (`src/app.ts`) or links to (`[x](docs/metrics.md)`) is
 * there, so a move that forgets its docs fails here rather than in a reader's hands.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TOP = '(?:src|test|scripts|bench|examples|docs|packages)/';

/** The repository paths `text` names, without globs and placeholders. */
function namedPaths(text: string): string[] {
  const named = [
    ...text.matchAll(new RegExp(`\`(${TOP}[^\`\\s]*)\``, 'g')),
    ...text.matchAll(new RegExp(`\\]\\((${TOP}[^)#\\s]*)`, 'g')),
  ].map((match) => match[1] ?? '');
  return named.filter((named) => !/[*{}<>…]/.test(named));
}

async function docs(): Promise<string[]> {
  const inDocs = (await readdir(path.join(ROOT, 'docs'), { recursive: true }))
    .filter((file) => file.endsWith('.md'))
    .map((file) => path.join('docs', file));
  return ['README.md', 'examples/executor/README.md', ...inDocs];
}

describe('the docs', () => {
  it('find the paths they name', () => {
    expect(
      namedPaths('see `src/app.ts`, `src/turns/*.ts`, [m](docs/metrics.md#scrape), `npm test`'),
    ).toEqual(['src/app.ts', 'docs/metrics.md']);
  });

  it('name only files that exist', async () => {
    const missing: string[] = [];
    for (const doc of await docs()) {
      const text = await readFile(path.join(ROOT, doc), 'utf8');
      // A doc links relative to its folder; a path in code is from the repository root.
      for (const named of namedPaths(text)) {
        const there = [path.join(ROOT, named), path.join(ROOT, path.dirname(doc), named)];
        if (!there.some((candidate) => existsSync(candidate))) missing.push(`${doc}: ${named}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
