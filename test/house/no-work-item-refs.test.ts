/**
 * Comments and docs say why, not which work item asked for it. "issue 15 item 6" or
 * "(task 4)" means nothing to a reader without the tracker, and nothing once the item is
 * closed; the reason it stood for belongs in the text instead. References to the
 * interface documents ("decisions row 34", "part C", "§6.3") are what a reader can look
 * up, and stay.
 *
 * Every text file of the service, its tests, benches, scripts, examples, the client's
 * source and the docs is read line by line (code and comments alike, so a test's name is
 * held to it too), and each line that names a work item is listed as `file:line`.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** This file: its cases below name work items on purpose. */
const SELF = path.relative(ROOT, fileURLToPath(import.meta.url));
/** What is read: folders walked whole, and single files. */
const SCANNED = [
  'src',
  'test',
  'bench',
  'scripts',
  'examples',
  'packages/client/src',
  'docs',
  'README.md',
];
/** Folders never walked: installed and generated trees. */
const SKIP = new Set(['node_modules', '.git', 'dist', 'coverage']);
/** Files read as text. */
const TEXT = /\.(?:ts|js|mjs|md|html|css|svg|sql|lua|json|ya?ml)$/;

/**
 * The ways a work item is named: "issue 15", "Issue #3", "tasks 2", "issue "Agent
 * turns"", "item 4" or "items 3 to 5", and an item's "done-when". Zod's issues ("the
 * issue's type") and the interface's rows and parts are not matched.
 */
const WORK_ITEM = [
  /\b(?:issue|task|ticket)s?(?:\s+#?|\s*#)\d+/i,
  /\b(?:issue|task)s?\s+"[^"\n]+"/i,
  /\bitems?\s+#?\d+\b/i,
  /\bdone-when\b/i,
];

/** The lines of `text` that name a work item, as `name:line: text`. */
function workItemRefs(name: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (WORK_ITEM.some((pattern) => pattern.test(line))) {
      found.push(`${name}:${i + 1}: ${line.trim()}`);
    }
  });
  return found;
}

/** Every text file under `entry` (a folder or a file), relative to the root. */
async function textFiles(entry: string): Promise<string[]> {
  const full = path.join(ROOT, entry);
  if (TEXT.test(entry)) return [entry];
  const files: string[] = [];
  for (const child of await readdir(full, { withFileTypes: true })) {
    if (SKIP.has(child.name)) continue;
    const relative = path.join(entry, child.name);
    if (child.isDirectory()) files.push(...(await textFiles(relative)));
    else if (TEXT.test(child.name)) files.push(relative);
  }
  return files;
}

describe('work-item references', () => {
  it('are found, with file and line, in the shapes they are written in', () => {
    const fixture = [
      '/**',
      ' * The turn runtime of one process (decisions part C; issue "Agent turns" item 2): who',
      ' */',
      '  // Issue 15 item 6: OpenTelemetry traces, off unless a collector is named.',
      ' * Where one append goes (`http-server.ts`; issue 13, item 1):',
      ' * (see task 4) and issue #12',
      " it('traces only when a collector is named (item 4)', () => {",
      ' * Turns survive the process (done-when 2).',
    ].join('\n');
    expect(workItemRefs('src/example.ts', fixture)).toEqual([
      'src/example.ts:2: * The turn runtime of one process (decisions part C; issue "Agent turns" item 2): who',
      'src/example.ts:4: // Issue 15 item 6: OpenTelemetry traces, off unless a collector is named.',
      'src/example.ts:5: * Where one append goes (`http-server.ts`; issue 13, item 1):',
      'src/example.ts:6: * (see task 4) and issue #12',
      "src/example.ts:7: it('traces only when a collector is named (item 4)', () => {",
      'src/example.ts:8: * Turns survive the process (done-when 2).',
    ]);
  });

  it('leave the interface documents and zod issues alone', () => {
    const allowed = [
      ' * The turn machine: decisions part C (`live.phase`) with rows 50, 51, 60, 90 and 91.',
      '    /** Marks when the phase changed (`live.since`, row 34). */',
      ' * interface table 3.2 with decisions rows 28–30 and 92–94 (§6.3, part B)',
      "  custom: 'a zod issue code (`ctx.addIssue`)',",
      "    // non-object fails it too, though the issue's type does not say so.",
      '  for (const issue of error.issues) {',
      '  const items = page.items.slice(0, 2);',
    ].join('\n');
    expect(workItemRefs('src/example.ts', allowed)).toEqual([]);
  });

  it('appear nowhere in the source, tests, benches, scripts, examples, client or docs', async () => {
    const files = (await Promise.all(SCANNED.map((entry) => textFiles(entry)))).flat();
    // The walk reaches the trees it should: a broken walk would find nothing to refuse.
    expect(files).toContain('src/turns/runtime.ts');
    expect(files).toContain('docs/architecture.md');
    expect(files).toContain('packages/client/src/tail.ts');
    const found: string[] = [];
    for (const file of files) {
      if (file === SELF) continue;
      found.push(...workItemRefs(file, await readFile(path.join(ROOT, file), 'utf8')));
    }
    expect(found, 'say the reason instead of the work item').toEqual([]);
  });
});
