/**
 * `npm run statecharts` writes `docs/statecharts/*` from the machines in `src/machines`;
 * `npm run statecharts:check` (`--check`) writes nothing and exits non-zero naming every
 * stale file. See `scripts/statecharts/generate.ts` for the machine file convention.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DOCS_DIR, renderStatecharts, staleStatecharts } from './statecharts/generate.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (process.argv.includes('--check')) {
  const stale = await staleStatecharts(root);
  if (stale.length > 0) {
    console.error(`Stale statecharts (run npm run statecharts):\n  ${stale.join('\n  ')}`);
    process.exit(1);
  }
  console.log('Statecharts are up to date.');
} else {
  const files = await renderStatecharts(root);
  await mkdir(path.join(root, DOCS_DIR), { recursive: true });
  // Files no machine produces any more are removed, so the folder mirrors the machines.
  for (const file of await staleStatecharts(root)) {
    if (!files.has(file)) await rm(path.join(root, file));
  }
  for (const [file, content] of files) {
    await writeFile(path.join(root, file), content);
    console.log(`wrote ${file}`);
  }
}
