/**
 * Step 2: the executor's face of the session log. `GET /sessions/{id}/events?from=N`
 * without `to` stays open and streams one JSON line per record, `{"Ok": record}`, or a
 * last `{"Err": {code, message, cursor}}` when the tail ends early (`token_expired`,
 * `service_stopping`, `read_failed`; `cursor` is where to resume). Its face is the
 * public records plus those addressed to this executor, with the call arguments in plain
 * text. The tail reconnects until the session is archived.
 */
import { sessionPath, type Settings } from './service.ts';
import type { ExecutorToken } from './token.ts';

/** A record as the executor's face serves it. */
export interface FaceRecord {
  readonly envelope: {
    readonly cursor: number;
    readonly kind: { readonly name: string; readonly version: number };
    readonly producer: string;
    readonly to: string | null;
  };
  readonly body: Record<string, unknown>;
}

type Line = { Ok: FaceRecord } | { Err: { code: string; message: string; cursor: number | null } };

/** Wait this long before reconnecting after a failure. */
const RETRY_MS = 1_000;

/** The lines of an NDJSON body as they arrive. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      yield buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
    }
  }
}

const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Every record of the executor's face from cursor `from` on, in order, across token
 * renewals and reconnections; ends after `session.archived` or when `signal` aborts.
 */
export async function* followFace(
  settings: Settings,
  token: ExecutorToken,
  from: number,
  signal: AbortSignal,
): AsyncGenerator<FaceRecord> {
  let next = from;
  reading: while (!signal.aborted) {
    try {
      const response = await fetch(
        new URL(sessionPath(settings, `/events?from=${next}`), settings.serviceUrl),
        { headers: { authorization: `Bearer ${await token.get()}` }, signal },
      );
      if (response.status === 401) token.renew();
      if (!response.ok || response.body === null) {
        await response.body?.cancel();
        throw new Error(`the tail answered ${response.status}`);
      }
      for await (const text of lines(response.body)) {
        if (text === '') continue;
        const line = JSON.parse(text) as Line;
        if ('Err' in line) {
          next = line.Err.cursor ?? next;
          // Row 68: the tail ends when the token does; a fresh one resumes it at once.
          if (line.Err.code === 'token_expired') {
            token.renew();
            continue reading;
          }
          break;
        }
        yield line.Ok;
        next = line.Ok.envelope.cursor + 1;
        if (line.Ok.envelope.kind.name === 'session.archived') return;
      }
    } catch (error) {
      // Our own signal aborted the request: stop quietly.
      if (error instanceof Error && error.name === 'AbortError') return;
      console.error(JSON.stringify({ event: 'tail_failed', error: String(error) }));
    }
    await pause(RETRY_MS, signal);
  }
}
