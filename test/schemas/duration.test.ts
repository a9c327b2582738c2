import { describe, expect, it } from 'vitest';
import {
  BACKOFF_BOUNDS,
  DURATION_PATTERN,
  TIMEOUT_BOUNDS,
  boundedDuration,
  parseDuration,
} from '../../src/schemas/duration.ts';
import { refusals } from './refusals.ts';

describe('parseDuration', () => {
  it.each([
    ['100ms', 100],
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    ['0', 0],
    ['0s', 0],
    ['.5s', 500],
    ['1.s', 1000],
    ['1h1h', 7_200_000],
    ['2h45m0.5s', 9_900_500],
    ['1us', 0.001],
    ['1µs', 0.001],
    ['1μs', 0.001],
    ['1000ns', 0.001],
    ['-1s', -1000],
    ['+2s', 2000],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each([
    '',
    '1',
    's',
    '-',
    '+',
    '1x',
    '1d',
    '1 s',
    ' 1s',
    '1s ',
    '1.5',
    'ms',
    '1s1',
    '.s',
    '1e3s',
  ])('refuses %j', (text) => {
    expect(parseDuration(text)).toBeNull();
  });

  it("refuses a span beyond Go's int64 nanoseconds and takes one just below", () => {
    expect(parseDuration('2562047h')).toBe(2_562_047 * 3_600_000);
    expect(parseDuration('2562048h')).toBeNull();
  });

  it('agrees with the JSON Schema pattern on unsigned text', () => {
    for (const text of ['100ms', '1m30s', '0', '1.s', '1', '1d', '-1s']) {
      expect(DURATION_PATTERN.test(text), text).toBe(
        parseDuration(text) !== null && !text.startsWith('-'),
      );
    }
  });
});

describe('boundedDuration', () => {
  const backoff = boundedDuration(BACKOFF_BOUNDS);
  const timeout = boundedDuration(TIMEOUT_BOUNDS);

  it.each(['100ms', '0.1s', '1s', '59.999s', '1m', '60000ms'])('takes backoff %s', (text) => {
    expect(refusals(backoff, text)).toEqual([]);
  });

  it.each(['99ms', '99.999ms', '1m0.001s', '60001ms', '0', '1h'])(
    'refuses backoff %s by its bounds',
    (text) => {
      expect(refusals(backoff, text)).toEqual([
        { field: 'body', reason: 'must be a duration from 100ms to 1m' },
      ]);
    },
  );

  it('refuses what is not a duration with one reason, not a bound as well', () => {
    expect(refusals(backoff, '1 minute')).toEqual([
      { field: 'body', reason: 'must be a duration such as 100ms or 1m30s, from 100ms to 1m' },
    ]);
    expect(refusals(backoff, 5)).toEqual([{ field: 'body', reason: 'must be a string' }]);
  });

  it('holds timeouts to 1s..15m', () => {
    expect(refusals(timeout, '1s')).toEqual([]);
    expect(refusals(timeout, '15m')).toEqual([]);
    expect(refusals(timeout, '999ms')).toEqual([
      { field: 'body', reason: 'must be a duration from 1s to 15m' },
    ]);
    expect(refusals(timeout, '15m1ms')).toEqual([
      { field: 'body', reason: 'must be a duration from 1s to 15m' },
    ]);
  });
});
