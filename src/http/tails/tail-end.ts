/**
 * What ends a session tail before its log does (`lines.ts`), and why: the reason its last
 * line tells.
 */

/** Why a tail's token stopped standing, as its `TailEnd` carries it. */
export class TokenRevoked extends Error {
  override readonly name = 'TokenRevoked';
}

/**
 * Why a tail ends before its log does: the reason its `TailEnd` carries.
 * `gone`: the reader went, and no last line is written.
 */
export type TailEnding = 'gone' | 'expired' | 'stopping' | 'lagging' | TokenRevoked;

/** Hears that a tail ended (`TailEnd.hear`). */
interface EndHearer {
  ending(): void;
}

/**
 * What ends a tail before its log does, and why (`TailEnding`), whatever ends it. Not an
 * AbortController: the tail's lines hear it by a call (`hear`), where a signal would hold
 * a table of listeners for each open tail (`npm run bench`, memory part). A signal is made
 * only for a caller that asks for one (`signal`).
 */
export class TailEnd {
  #reason: TailEnding | undefined;
  #hearer: EndHearer | undefined;
  #controller: AbortController | undefined;

  /** True once the tail was ended. */
  get ended(): boolean {
    return this.#reason !== undefined;
  }

  /** Why the tail was ended, or undefined while it was not. */
  get reason(): TailEnding | undefined {
    return this.#reason;
  }

  /** Aborted, with the ending as its reason, once the tail is ended; made on first use. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Ends the tail with `ending`, which its last line tells (`tailLines`); the first wins. */
  end(ending: TailEnding): void {
    if (this.#reason !== undefined) return;
    this.#reason = ending;
    this.#controller?.abort(ending);
    this.#hearer?.ending();
  }

  /** `hearer` is told once the tail ends; one hearer, the tail's lines. */
  hear(hearer: EndHearer): void {
    this.#hearer = hearer;
  }
}
