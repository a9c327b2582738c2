/**
 * The two ways the egress guard stops an exchange with a tenant-supplied server: it
 * refused where the request would go (`EgressRefused`), or the server sent more than the
 * exchange may receive (`ResponseTooLarge`).
 *
 * Neither is a `TypeError`: the MCP SDK reads a `TypeError` from `fetch` during OAuth
 * metadata discovery as a browser's CORS failure and quietly tries the next URL, and a
 * refusal must stop the flow instead.
 */
import type { AddressClass } from './addresses.ts';

/** What the guard refused. */
export type RefusalReason =
  /** Not an http or https URL. */
  | 'scheme'
  /** Every address the host resolves to (or the literal address) is refused. */
  | 'address'
  /** A redirect to another host, to plain http from https, or past the hop limit. */
  | 'redirect';

/** The guard refused a request before any connection was made. */
export class EgressRefused extends Error {
  readonly reason: RefusalReason;
  /** The host of the refused request, as the URL names it. */
  readonly host: string;
  /** Why its address is refused, for `address`. */
  readonly addressClass: AddressClass | 'invalid' | undefined;

  constructor(
    reason: RefusalReason,
    host: string,
    message: string,
    addressClass?: AddressClass | 'invalid',
  ) {
    super(message);
    this.name = 'EgressRefused';
    this.reason = reason;
    this.host = host;
    this.addressClass = addressClass;
  }
}

/** A server sent more bytes than the exchange may receive in all. */
export class ResponseTooLarge extends Error {
  /** The exchange's limit in bytes. */
  readonly limit: number;

  constructor(limit: number) {
    super(`the answers exceed ${limit} bytes`);
    this.name = 'ResponseTooLarge';
    this.limit = limit;
  }
}

/** The guard's own failure in `error` or its chain of causes (fetch wraps it in a TypeError). */
export function egressFailure(error: unknown): EgressRefused | ResponseTooLarge | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth += 1) {
    if (current instanceof EgressRefused || current instanceof ResponseTooLarge) return current;
    current = current.cause;
  }
  return undefined;
}
