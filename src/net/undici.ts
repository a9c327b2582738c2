/**
 * The `undici` package, whose `Agent` the egress guard hands Node's fetch (`egress.ts`):
 * checked against Node's own copy at start, loaded on first use.
 */
import type * as UndiciModule from 'undici';
import undiciPackage from 'undici/package.json' with { type: 'json' };

/**
 * Node's fetch drives a dispatcher of the `undici` package through the dispatcher
 * interface, which holds within a major version: refuse to start on a mismatch rather
 * than fail on the first request.
 */
export function checkUndiciMajor(): void {
  const bundled = process.versions.undici;
  if (bundled !== undefined && bundled.split('.')[0] !== undiciPackage.version.split('.')[0]) {
    throw new Error(
      `the undici package ${undiciPackage.version} does not match Node's fetch (undici ${bundled})`,
    );
  }
}

type Undici = typeof UndiciModule;

let undici: Promise<Undici> | undefined;

/** The `undici` package, loaded once, on first use. */
export function loadUndici(): Promise<Undici> {
  undici ??= import('undici');
  return undici;
}
