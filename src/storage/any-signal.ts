/**
 * A signal aborted when any of some signals is, made of a plain controller and one
 * listener on each source, which `release` removes. A tail holds one for as long as it
 * is open (`follow.ts`, `http/tails/lines.ts`), so its cost is paid by every open tail:
 * `AbortSignal.any` also builds a set of weak references to the sources, a weak
 * reference to the result in each source and a finalisation record, and keeps the
 * result strongly while it has listeners; and its `aborted` walks the sources on every
 * read, which the tails do once or twice per record each (with a thousand tails of one
 * session, a tenth of the server's time in `npm run bench`), where a plain controller's
 * is a field. The sources must outlive the caller's use, which calls `release` when done.
 */

export interface AnySignal {
  readonly signal: AbortSignal;
  /** Stops listening to the sources; the signal no longer follows them. */
  readonly release: () => void;
}

export function anySignal(signals: readonly AbortSignal[]): AnySignal {
  const controller = new AbortController();
  const abort = (event: Event): void => {
    controller.abort((event.target as AbortSignal).reason);
  };
  let listened = 0;
  for (const source of signals) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    source.addEventListener('abort', abort, { once: true });
    listened += 1;
  }
  return {
    signal: controller.signal,
    release: () => {
      for (const source of signals.slice(0, listened)) {
        source.removeEventListener('abort', abort);
      }
    },
  };
}
