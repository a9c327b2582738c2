/**
 * A tail's end (`TailEnd`): the first ending wins and is what its last line tells; its
 * lines hear it by a call, and an abort signal is made only for a caller that asks.
 */
import { describe, expect, it } from 'vitest';
import { TailEnd, TokenRevoked } from '../../../src/http/tails/tail-end.ts';

describe('TailEnd', () => {
  it('keeps the first ending and tells its hearer once', () => {
    const end = new TailEnd();
    const heard: string[] = [];
    end.hear({ ending: () => heard.push(String(end.reason)) });
    expect([end.ended, end.reason]).toEqual([false, undefined]);
    end.end('expired');
    end.end('stopping');
    expect([end.ended, end.reason, heard]).toEqual([true, 'expired', ['expired']]);
  });

  it('aborts the signal it made with the ending, made before or after the end', () => {
    const before = new TailEnd();
    const signal = before.signal;
    expect(before.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    const revoked = new TokenRevoked('the install key was rotated');
    before.end(revoked);
    expect([signal.aborted, signal.reason]).toEqual([true, revoked]);

    const after = new TailEnd();
    after.end('lagging');
    expect([after.signal.aborted, after.signal.reason]).toEqual([true, 'lagging']);
  });
});
