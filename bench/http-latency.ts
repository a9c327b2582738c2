/**
 * The latency part of `npm run bench`: append-to-delivery over WebSocket and NDJSON, each
 * load run twice in a row with the same load, layout, transport and number of tails: on
 * the app (ours), then on the bare baseline (`http-bare.ts`: the same Lua mint, and a
 * broadcast of each line to plain tails held in memory). A row prints ours, the bare
 * baseline and the ratio of their p99, and over the measured seconds of each the server's
 * event-loop delay p99 and longest GC pause (its `Probe` window, `server-probe.ts`), so a
 * regression in either shows.
 *
 * Loads and targets:
 * - 100 sessions x 1 tail at 1,000 records/s: p99 <= 2x bare and <= 10 ms, and the
 *   server's loop p99 < 5 ms, on both transports;
 * - 1 session x 100 tails at 1,000 records/s (100,000 lines/s, a hot session beyond the
 *   other loads): p99 <= 10 ms, the first load's bound;
 * - 1,000 sessions x 1 tail at 100 records/s: p99 <= 30 ms;
 * - 1 session x 1,000 tails at 100 records/s: p99 <= 3x the bare broadcast.
 * A row is met only when every record also reached every tail it should.
 *
 * Before the rows, WARMUP_RUNS unmeasured runs of ours and one of bare per transport (a
 * fresh server's first runs go through cold code while V8 sizes its heap). Each row also
 * yields the stage timings of its appends and lines (`http-stages.ts`), ours beside bare.
 */
import type { BenchServer } from './http-ipc.ts';
import type { ServerAnswer } from './http-server.ts';
import {
  APPEND_STAGES,
  DELIVERY_STAGES,
  type Stage,
  type StageFigure,
  type StageFigures,
} from './http-stages.ts';
import {
  barePaths,
  ourPaths,
  tailLatency,
  type BenchSession,
  type Latency,
  type LatencyRun,
  type Measured,
  type Paths,
  type Transport,
} from './http-tails.ts';
import type { ProbeWindow } from './server-probe.ts';
import { ms, rate } from './table.ts';

const micros = (value: number) => value.toFixed(1);

/**
 * One bound of a row's target: its words, whether ours is within it, and for a bound in
 * ms, whether bare's own p99 is.
 */
interface Bound {
  readonly words: string;
  readonly met: boolean;
  readonly bareMet?: boolean;
}

interface Load {
  readonly tails: number;
  readonly rate: number;
  readonly shared: boolean;
  /** The bounds of the row's target, ours held beside bare. */
  readonly target: (ours: ServerLatency, bare: ServerLatency) => readonly Bound[];
}

/** A bound on the p99 in ms, which bare's own p99 is read against too. */
const within = (limit: number, ours: Latency<unknown>, bare: Latency<unknown>): Bound => ({
  words: `<= ${limit} ms`,
  met: ours.p99 <= limit,
  bareMet: bare.p99 <= limit,
});

/**
 * A latency run with the server's probe window, stage timings and CPU time (µs per line
 * its tails were to receive) over its measured seconds.
 */
export type ServerLatency = Latency<{
  window: ProbeWindow;
  stages: StageFigures | null;
  cpuPerLine: number;
  /** The kernel's part of it: system calls, loopback TCP included. */
  systemPerLine: number;
}>;

export const LOADS: readonly Load[] = [
  {
    tails: 100,
    rate: 1000,
    shared: false,
    target: (ours, bare) => [
      { words: '<= 2x bare', met: ours.p99 <= 2 * bare.p99 },
      within(10, ours, bare),
      { words: 'loop p99 < 5 ms', met: ours.server.window.loopP99 < 5 },
    ],
  },
  { tails: 100, rate: 1000, shared: true, target: (ours, bare) => [within(10, ours, bare)] },
  { tails: 1000, rate: 100, shared: false, target: (ours, bare) => [within(30, ours, bare)] },
  {
    tails: 1000,
    rate: 100,
    shared: true,
    target: (ours, bare) => [{ words: '<= 3x bare', met: ours.p99 <= 3 * bare.p99 }],
  },
];

/**
 * BENCH_LOADS picks loads by layout, for a quick look at one row (comma-separated:
 * `100x1`, `1x100`, `1000x1`, `1x1000`; all by default).
 */
const LOAD_NAMES = process.env.BENCH_LOADS?.split(',').map((name) => name.trim());
const picked = (load: Load): boolean =>
  LOAD_NAMES === undefined ||
  LOAD_NAMES.includes(load.shared ? `1x${load.tails}` : `${load.tails}x1`);

/** Unmeasured runs of ours per transport before the measured ones (and one of bare). */
const WARMUP_RUNS = 2;

/** One row of the bench's table, and the stage breakdowns of its appends and lines. */
export interface LatencyRow {
  readonly cells: readonly string[];
  /** The row's label, then a cell per stage of `APPEND_STAGES`, and of `DELIVERY_STAGES`. */
  readonly appendStages: readonly string[];
  readonly lineStages: readonly string[];
}

/** `a / b` of two figures in ms. */
export const pair = (a: number, b: number) => `${ms(a)} / ${ms(b)}`;

export class LatencyPart {
  readonly #server: BenchServer;
  readonly #ours: Paths;
  readonly #bare: Paths;
  readonly #sessions: readonly BenchSession[];

  constructor(server: BenchServer, sessions: readonly BenchSession[]) {
    this.#server = server;
    this.#sessions = sessions;
    this.#ours = ourPaths(`http://127.0.0.1:${server.ready.app}`);
    this.#bare = barePaths(`http://127.0.0.1:${server.ready.bare}`);
  }

  /** The probe window, stage timings and CPU time of the server over a run's measured seconds. */
  #measured(): Measured<ServerLatency['server']> {
    const server = this.#server;
    let cpu: Promise<Extract<ServerAnswer, { type: 'cpu' }>> | undefined;
    return {
      began: () => {
        // Not awaited: the appender is paced; the server answers between its sends.
        void server.ask('window');
        void server.ask('stages-start');
        cpu = server.ask('cpu');
      },
      ended: async (lines) => {
        const { window } = await server.ask('window');
        // Before the stage timings stop: sorting their samples is not the run's.
        const after = await server.ask('cpu');
        const { stages } = await server.ask('stages-stop');
        const before = (await cpu) ?? after;
        return {
          window,
          stages,
          cpuPerLine: (after.micros - before.micros) / lines,
          systemPerLine: (after.system - before.system) / lines,
        };
      },
    };
  }

  async #run(paths: Paths, run: LatencyRun): Promise<ServerLatency> {
    const latency = await tailLatency(paths, this.#sessions, run, this.#measured());
    // Progress on stderr, so a long run shows where it is; the tables go to stdout.
    const layout = run.shared ? `1 x ${run.tails}` : `${run.tails} x 1`;
    process.stderr.write(
      `latency ${run.transport} ${layout} at ${run.rate}/s, ${paths.name}: p99 ${ms(latency.p99)} ms\n`,
    );
    return latency;
  }

  /** The warm-up runs, then one row per load and transport. */
  async rows(transports: readonly Transport[]): Promise<LatencyRow[]> {
    const warm = { tails: 100, rate: 1000, shared: false };
    for (let run = 0; run < WARMUP_RUNS; run++) {
      for (const transport of transports) await this.#run(this.#ours, { transport, ...warm });
    }
    for (const transport of transports) await this.#run(this.#bare, { transport, ...warm });
    const rows: LatencyRow[] = [];
    for (const load of LOADS.filter(picked)) {
      for (const transport of transports) {
        const run: LatencyRun = { transport, ...load };
        const ours = await this.#run(this.#ours, run);
        const bare = await this.#run(this.#bare, run);
        rows.push(row(load, transport, ours, bare));
      }
    }
    return rows;
  }
}

function row(
  load: Load,
  transport: Transport,
  ours: ServerLatency,
  bare: ServerLatency,
): LatencyRow {
  const bounds = load.target(ours, bare);
  const complete = ours.delivered === ours.expected;
  const label = `${transport} p99 ms, ${
    load.shared ? `1 session x ${rate(load.tails)} tails` : `${rate(load.tails)} sessions x 1 tail`
  }, ${rate(load.rate)} rec/s`;
  const cells = [
    'latency',
    label,
    ms(ours.p99),
    ms(bare.p99),
    (ours.p99 / bare.p99).toFixed(2),
    verdict(bounds, complete),
    pair(ours.p50, bare.p50),
    pair(ours.server.window.loopP99, bare.server.window.loopP99),
    pair(ours.server.window.gcMaxMs, bare.server.window.gcMaxMs),
    [
      `${rate(load.shared ? load.rate * load.tails : load.rate)} lines/s`,
      `max ${pair(ours.max, bare.max)}`,
      `append p99 ${pair(ours.appendP99, bare.appendP99)}`,
      `delivered ${ours.delivered}/${ours.expected}, ${bare.delivered}/${bare.expected}`,
      `failed appends ${ours.failedAppends}/${bare.failedAppends}`,
      `server loop max ${pair(ours.server.window.loopMax, bare.server.window.loopMax)}`,
      `server CPU µs/line ${micros(ours.server.cpuPerLine)}/${micros(bare.server.cpuPerLine)} (system ${micros(ours.server.systemPerLine)}/${micros(bare.server.systemPerLine)})`,
      `client loop p99 ${pair(ours.loopP99, bare.loopP99)}`,
    ].join('; '),
  ];
  const stages = (names: readonly Stage[]) => [
    label,
    ...stageCells(names, ours.server.stages, bare.server.stages),
  ];
  return {
    cells,
    appendStages: stages(APPEND_STAGES),
    lineStages: stages(DELIVERY_STAGES),
  };
}

/**
 * `<bounds> met`, or `<bounds> MISSED: <what>`, naming each bound missed, marking a bound
 * in ms that bare's own p99 misses as well (on a machine where the bare broadcast cannot
 * keep to it, ours' miss says more of the machine than of ours), and lines not delivered.
 */
function verdict(bounds: readonly Bound[], complete: boolean): string {
  const words = bounds.map((bound) => bound.words).join(', ');
  const missed = bounds
    .filter((bound) => !bound.met)
    .map((bound) => (bound.bareMet === false ? `${bound.words} (bare too)` : bound.words));
  if (!complete) missed.push('lines not delivered');
  return missed.length === 0 ? `${words} met` : `${words} MISSED: ${missed.join(', ')}`;
}

/**
 * Per stage of `names`, `ours p50/p99 | bare p50/p99`: ours from the run on the app, bare
 * from the run on the bare route (which has no checks, store or wake stage of its own: `-`).
 */
function stageCells(
  names: readonly Stage[],
  ours: StageFigures | null,
  bare: StageFigures | null,
): string[] {
  const cell = (figure: StageFigure | undefined) =>
    figure === undefined || figure.count === 0 ? '-' : `${ms(figure.p50)}/${ms(figure.p99)}`;
  return names.map((stage) => `${cell(ours?.ours[stage])} | ${cell(bare?.bare[stage])}`);
}
