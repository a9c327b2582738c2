/**
 * A pino destination that keeps every line, so a test can grep what the service logged.
 */
import { Writable } from 'node:stream';

export interface LogCapture {
  readonly stream: Writable;
  /** Every line written so far, raw. */
  text(): string;
  /** Every line, parsed. */
  lines(): Record<string, unknown>[];
}

export function captureLog(): LogCapture {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const text = () => chunks.join('');
  return {
    stream,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
