/**
 * The console's statecharts view (`#/statecharts`) in headless Chromium: every machine of
 * `docs/statecharts` appears with its chart, the generated SVG as it is, and its states
 * and transitions tables, cell for cell the tables of its Markdown page there. The
 * generator writes all three from the machine (`npm run statecharts`, held to the
 * machines by `statecharts:check`), so the page and the docs cannot differ.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  openConsole,
  signInWith,
  type ConsolePage,
  usePageHarness,
} from '../support/console-page.ts';

const h = usePageHarness();

const DOCS = new URL('../../docs/statecharts/', import.meta.url);
const MACHINES = readdirSync(DOCS)
  .filter((file) => file.endsWith('.svg'))
  .map((file) => file.slice(0, -'.svg'.length))
  .sort();

/** A cell as read, whatever marks it up: no backticks, single spaces. */
const plain = (text: string) => text.replaceAll('`', '').replace(/\s+/g, ' ').trim();

/** The body rows of the Markdown table under `## <heading>` in `docs/statecharts/<machine>.md`. */
function markdownRows(machine: string, heading: string): string[][] {
  const page = readFileSync(new URL(`${machine}.md`, DOCS), 'utf8');
  const section = page.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  // The header and its separator, then the rows; `\|` is a pipe inside a cell.
  return lines.slice(2).map((line) =>
    line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => plain(cell.replaceAll('\\|', '|'))),
  );
}

/*
 * Scripts run in the page, as text: the tests' TypeScript has no DOM types.
 */

/** The body rows of machine `machine`'s `index`th table, each cell as its text reads. */
const pageRows = (page: Page, machine: string, index: number) =>
  page.evaluate<string[][]>(
    `[...document.querySelectorAll('article[data-machine="${machine}"] table')[${index}].tBodies[0].rows]
      .map((row) => [...row.cells].map((cell) => cell.textContent))`,
  );

/** Whether machine `machine`'s chart as drawn is `file`, parsed by the same browser. */
const sameChart = (page: Page, machine: string, file: string) =>
  page.evaluate<boolean>(`{
    const shown = document.querySelector('article[data-machine="${machine}"] .chart > svg');
    const parsed = new DOMParser().parseFromString(${JSON.stringify(file)}, 'image/svg+xml');
    const svg = document.importNode(parsed.documentElement, true);
    shown.innerHTML === svg.innerHTML && shown.getAttribute('viewBox') === svg.getAttribute('viewBox');
  }`);

/** A console page signed in as the owner of a new install. */
async function signedIn(): Promise<ConsolePage> {
  const install = await h.flow.install();
  const opened = await openConsole(h);
  await signInWith(h, opened.page, install.owner);
  return opened;
}

describe('the statecharts view', () => {
  it('shows every machine’s generated chart and the tables of its docs page', async () => {
    expect(MACHINES).toEqual(['claim', 'connection', 'proposal', 'session', 'turn']);
    const { page, problems } = await signedIn();
    await page.getByRole('link', { name: 'Statecharts' }).click();
    await page.locator('#statecharts').waitFor();

    await expect
      .poll(() =>
        page.evaluate<string[]>(
          `[...document.querySelectorAll('#statecharts-list article.machine')].map((a) => a.dataset.machine)`,
        ),
      )
      .toEqual(MACHINES);
    for (const machine of MACHINES) {
      await page.locator(`article[data-machine="${machine}"] .chart > svg`).waitFor();
      const file = readFileSync(new URL(`${machine}.svg`, DOCS), 'utf8');
      expect([machine, await sameChart(page, machine, file)]).toEqual([machine, true]);

      const stateRows = markdownRows(machine, 'States');
      const transitionRows = markdownRows(machine, 'Transitions');
      expect(stateRows.length).toBeGreaterThan(1);
      expect(transitionRows.length).toBeGreaterThan(1);
      expect((await pageRows(page, machine, 0)).map((row) => row.map(plain))).toEqual(stateRows);
      expect((await pageRows(page, machine, 1)).map((row) => row.map(plain))).toEqual(
        transitionRows,
      );
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it('serves the tables the generator wrote beside the charts', async () => {
    const answer = await fetch(`${h.origin}/console/statecharts`);
    expect(answer.status).toBe(200);
    const files = MACHINES.map(
      (m) => JSON.parse(readFileSync(new URL(`${m}.json`, DOCS), 'utf8')) as unknown,
    );
    expect(await answer.json()).toEqual(files);
  });
});
