/**
 * A machine's state table as data: its states and its state × event rows, the cells of
 * `docs/statecharts/<name>.md`'s two tables, written beside it as `<name>.json`. The
 * Markdown page renders these rows and the console shows the JSON (served at
 * `GET /console/statecharts`), so the page and the docs cannot differ; both come from one
 * run of the generator over the machine.
 */
import prettier from 'prettier';
import type { Chart } from './walk.ts';

/** One state: its dotted path, whether it is initial or terminal, what it means. */
export interface StateRow {
  readonly state: string;
  readonly initial: boolean;
  readonly terminal: boolean;
  readonly description: string | null;
}

/** One transition, in the order the machine tries them; null target: it stays. */
export interface TransitionRow {
  readonly state: string;
  readonly event: string;
  readonly guard: string | null;
  readonly target: string | null;
  readonly actions: readonly string[];
  readonly note: string | null;
}

/** What `<name>.json` holds. */
export interface MachineTable {
  readonly machine: string;
  readonly title: string;
  /** The interface sections and decisions rows the machine serves. */
  readonly source: string | null;
  /** Repository-relative path of the machine's file. */
  readonly file: string;
  readonly states: readonly StateRow[];
  readonly transitions: readonly TransitionRow[];
  readonly invariants: readonly string[];
}

/** The table of `chart`, defined in `file`. */
export function machineTable(chart: Chart, file: string): MachineTable {
  return {
    machine: chart.id,
    title: chart.title,
    source: chart.source,
    file,
    states: chart.states.map((s) => ({
      state: s.path,
      initial: s.initial,
      terminal: s.terminal,
      description: s.description,
    })),
    transitions: chart.transitions.map((t) => ({
      state: t.source,
      event: t.event,
      guard: t.guard,
      target: t.target,
      actions: t.actions,
      note: t.description,
    })),
    invariants: chart.invariants,
  };
}

/** The table as `filepath`'s JSON, formatted as Prettier would. */
export async function renderTable(table: MachineTable, filepath: string): Promise<string> {
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(JSON.stringify(table), { ...options, filepath });
}
