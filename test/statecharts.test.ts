import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { setup, stateIn } from 'xstate';
import {
  DOCS_DIR,
  discoverMachines,
  exportName,
  renderStatecharts,
  staleStatecharts,
} from '../scripts/statecharts/generate.ts';
import { walkMachine } from '../scripts/statecharts/walk.ts';
import { proposalMachine } from '../src/machines/proposal.machine.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('statecharts', () => {
  it('are up to date with the machines (npm run statecharts:check)', async () => {
    expect(await staleStatecharts(root)).toEqual([]);
  });

  it('names every missing, changed or orphaned page as stale', async () => {
    const docsRoot = await mkdtemp(path.join(tmpdir(), 'statecharts-'));
    try {
      const files = await renderStatecharts(root);
      await mkdir(path.join(docsRoot, DOCS_DIR), { recursive: true });
      for (const [file, content] of files) await writeFile(path.join(docsRoot, file), content);
      expect(await staleStatecharts(root, docsRoot)).toEqual([]);

      const md = `${DOCS_DIR}/proposal.md`;
      const json = `${DOCS_DIR}/proposal.json`;
      const svg = `${DOCS_DIR}/proposal.svg`;
      const orphan = `${DOCS_DIR}/retired.md`;
      await writeFile(path.join(docsRoot, md), `${files.get(md) ?? ''}\nedited by hand\n`);
      await writeFile(path.join(docsRoot, json), '{}\n');
      await unlink(path.join(docsRoot, svg));
      await writeFile(path.join(docsRoot, orphan), '# Retired\n');
      expect(await staleStatecharts(root, docsRoot)).toEqual([md, json, svg, orphan]);
    } finally {
      await rm(docsRoot, { recursive: true, force: true });
    }
  });

  it('finds each machine under its conventional export name', async () => {
    expect(exportName('proposal')).toBe('proposalMachine');
    expect(exportName('connection-link')).toBe('connectionLinkMachine');
    const machines = await discoverMachines(root);
    expect(machines.map((m) => m.name)).toContain('proposal');
    expect(machines.find((m) => m.name === 'proposal')?.machine).toBe(proposalMachine);
  });

  it('reads states, guards, delays and targets from the machine definition', () => {
    const chart = walkMachine(proposalMachine);
    expect(chart.states.map((s) => [s.path, s.initial, s.terminal])).toEqual([
      ['none', true, false],
      ['pending', false, false],
      ['granted', false, true],
      ['declined', false, true],
      ['lapsed', false, true],
    ]);
    expect(chart.transitions).toContainEqual(
      expect.objectContaining({ source: 'pending', event: 'after lifetime', target: 'lapsed' }),
    );
    expect(chart.transitions).toContainEqual(
      expect.objectContaining({
        source: 'pending',
        event: 'consent.given',
        guard: 'not(isOwner)',
        target: null,
        actions: ['answer(not_owner)'],
      }),
    );
    expect(chart.invariants.length).toBeGreaterThan(0);
  });

  it('reads nested states with their parent, and leaves left by an ancestor are not terminal', () => {
    // A machine of its own: the walker's reading of nesting does not depend on which of
    // the product's machines happen to nest today.
    const nested = setup({
      types: { events: {} as { type: 'archive.requested' } | { type: 'work' } },
      guards: { isPhase: (_args, _params: { phase: string }) => true },
    }).createMachine({
      id: 'nested',
      initial: 'live',
      states: {
        live: {
          initial: 'idle',
          always: { guard: { type: 'isPhase', params: { phase: 'busy' } }, target: '.busy' },
          on: { 'archive.requested': { guard: stateIn('live.idle'), target: 'archived' } },
          states: { idle: { on: { work: 'busy' } }, busy: {} },
        },
        archived: { type: 'final' },
      },
    });
    const chart = walkMachine(nested);
    const row = (path: string) => chart.states.find((s) => s.path === path);
    expect(row('live')).toMatchObject({ parent: null, compound: true, terminal: false });
    expect(row('live.idle')).toMatchObject({ parent: 'live', initial: true, terminal: false });
    // A leaf with no way out of its own is left by its parent's transitions.
    expect(row('live.busy')).toMatchObject({ parent: 'live', terminal: false });
    expect(row('archived')).toMatchObject({ compound: false, terminal: true });
    expect(chart.transitions).toContainEqual(
      expect.objectContaining({
        source: 'live',
        event: 'archive.requested',
        guard: 'in(live.idle)',
        target: 'archived',
      }),
    );
    expect(chart.transitions).toContainEqual(
      expect.objectContaining({ source: 'live', guard: 'isPhase(busy)', target: 'live.busy' }),
    );
  });
});
