/**
 * Time and identity as injected ports: tests freeze both, the service uses the real ones.
 */
import { randomBytes } from 'node:crypto';

/** Wall-clock milliseconds since the Unix epoch. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock a test moves by hand. */
export class ManualClock implements Clock {
  #now: number;
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  advance(ms: number): void {
    this.#now += ms;
  }
  set(ms: number): void {
    this.#now = ms;
  }
}

/** Random bytes, injectable so tests can make ids reproducible. */
export interface Entropy {
  bytes(length: number): Buffer;
}

export const systemEntropy: Entropy = { bytes: (length) => randomBytes(length) };
