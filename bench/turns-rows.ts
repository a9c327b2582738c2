/**
 * The table of `npm run bench:turns` as its parts fill it: one row per measure, each run
 * on its own so that one that fails leaves the others measurable. A failed row reads
 * FAILED (with its baseline, when that was measured before the failure), and its error
 * is kept to be printed under the table.
 */

/** A target's verdict. */
export const verdict = (met: boolean) => (met ? 'met' : 'MISSED');

/** A row's failure after its baseline was measured: the row still shows the baseline. */
export class RowFailure extends Error {
  readonly baseline: string;
  constructor(message: string, baseline: string, options?: ErrorOptions) {
    super(message, options);
    this.baseline = baseline;
  }
}

/** The rows measured so far, and the errors of those that failed. */
export class TurnRows {
  readonly rows: string[][] = [];
  readonly failures: string[] = [];

  /** Runs one row's measurement; a failure becomes a FAILED row and an error under the table. */
  async row(
    measure: string,
    unit: string,
    target: string,
    run: () => Promise<string[]>,
  ): Promise<void> {
    try {
      this.rows.push([measure, unit, ...(await run())]);
    } catch (error) {
      this.failures.push(`${measure}: ${error instanceof Error ? error.message : String(error)}`);
      this.rows.push([
        measure,
        unit,
        'FAILED',
        error instanceof RowFailure ? error.baseline : '',
        '',
        `${target} FAILED`,
        `see error ${this.failures.length}`,
      ]);
    }
  }
}
