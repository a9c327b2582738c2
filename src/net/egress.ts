/**
 * The one way out to tenant-supplied URLs: MCP endpoints, OAuth
 * metadata, registration and token endpoints, and whatever a `WWW-Authenticate` header
 * points at. Every such request goes through an `Outbound` of the process's `Egress`:
 *
 * - http and https only;
 * - redirects followed only within the same host (`redirects.ts`);
 * - the address is decided (`addresses.ts`) where the socket is made: a literal address
 *   before connecting, a host name inside the connection's own DNS lookup, on the very
 *   addresses the socket will try. A name that answers a public address to a first lookup
 *   and a private one to the next (DNS rebinding) is refused on the second, since nothing
 *   connects to an address the guard has not seen. Addresses in `EGRESS_ALLOW` pass.
 *
 * `fetch` is Node's own; each `Outbound` gives it an undici `Agent` (the package Node's
 * fetch is built on, same major version) whose connector does the checks, and closes it
 * with the exchange, so no connection outlives the session it served. The package is
 * loaded by the first exchange that sends (some 6 MB of RSS): a service whose tenants
 * link no MCP server never loads it.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Agent, buildConnector } from 'undici';
import { decideAddress, type AddressDecision } from './addresses.ts';
import { isRedirect, nextHop, type Hop } from './redirects.ts';
import { EgressRefused, ResponseTooLarge, egressFailure } from './refusal.ts';
import { checkUndiciMajor, loadUndici } from './undici.ts';

/** `fetch` as the MCP SDK takes it. */
export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Where upstream detail goes: the process logger's `warn` (pino's signature). */
export interface EgressLog {
  warn(detail: object, message: string): void;
  /** Where what a server said goes, when the operator asks for it (`LOG_LEVEL=debug`). */
  debug?(detail: object, message: string): void;
}

export interface EgressOptions {
  /** `EGRESS_ALLOW`: addresses allowed even though their class is refused. */
  readonly allow?: BlockList;
  /** Receives the detail of failed exchanges (`report`); nothing is logged without it. */
  readonly log?: EgressLog;
  /** Resolves host names; `dns.lookup` by default (tests stand in a resolver). */
  readonly lookup?: LookupFunction;
}

/** The last request of an exchange and its answer's status, for naming what failed. */
export interface LastRequest {
  readonly url: URL;
  readonly method: string;
  /** The request's `content-type`, if any. */
  readonly contentType: string | undefined;
  /** The answer's HTTP status, once there was one. */
  readonly status: number | undefined;
}

/** One exchange's way out: a guarded `fetch` and what it saw. */
export interface Outbound {
  readonly fetch: GuardedFetch;
  /** Aborted on the exchange's first refusal or overrun: the caller stops there. */
  readonly signal: AbortSignal;
  /** The first refusal or overrun of this exchange, even one the caller swallowed. */
  failure(): EgressRefused | ResponseTooLarge | undefined;
  lastRequest(): LastRequest | undefined;
  /** Closes the exchange's connections. */
  close(): Promise<void>;
}

/** Statuses whose answers carry no body. */
const BODILESS: ReadonlySet<number> = new Set([101, 204, 205, 304]);

/** The egress guard of one process: the allow-list, the resolver, the detail log. */
export class Egress {
  readonly #allow: BlockList;
  readonly #log: EgressLog | undefined;
  readonly #lookup: LookupFunction;

  constructor(options: EgressOptions = {}) {
    checkUndiciMajor();
    this.#allow = options.allow ?? new BlockList();
    this.#log = options.log;
    this.#lookup = options.lookup ?? dnsLookup;
  }

  /** The guard's decision on one address (pure: no lookup, no connection). */
  decide(address: string): AddressDecision {
    return decideAddress(address, this.#allow);
  }

  /**
   * Refuses a URL that is not http(s), or whose host is a literal address the guard
   * refuses, before anything is sent. Host names are decided at connect time.
   * @throws EgressRefused
   */
  check(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new EgressRefused('scheme', url.hostname, 'only http and https URLs are fetched');
    }
    this.#checkLiteral(url.hostname.replace(/^\[(.*)\]$/, '$1'));
  }

  /** Logs the detail of a failed exchange at warn level; the caller leaves secrets out. */
  report(detail: object, message: string): void {
    this.#log?.warn(detail, message);
  }

  /**
   * Logs what a tenant's server said at debug level only: its words may hold the tenant's
   * data or, echoed, credentials, so they never reach the warn line.
   */
  said(detail: object, message: string): void {
    this.#log?.debug?.(detail, message);
  }

  /**
   * Opens an exchange. With `maxResponseBytes`, the bodies of all its answers together may
   * be that long: past it the body errors with `ResponseTooLarge` and `signal` aborts.
   */
  open(options: { readonly maxResponseBytes?: number } = {}): Outbound {
    const aborter = new AbortController();
    let failure: EgressRefused | ResponseTooLarge | undefined;
    let last: LastRequest | undefined;
    // The first refusal or overrun ends the exchange: a client that swallows one (the MCP
    // SDK ignores a failed metadata request and tries defaults) must not carry on.
    const fail = <E extends EgressRefused | ResponseTooLarge>(error: E): E => {
      failure ??= error;
      aborter.abort(error);
      return error;
    };
    // Made by the exchange's first request (see the header).
    let agent: Promise<Agent> | undefined;
    const dispatcher = (): Promise<Agent> => {
      agent ??= loadUndici().then(
        ({ Agent, buildConnector }) =>
          new Agent({ connect: this.#connector(buildConnector, fail) }),
      );
      return agent;
    };
    let left = options.maxResponseBytes ?? Infinity;
    const limit = options.maxResponseBytes ?? Infinity;

    const counted = (response: Response): Response => {
      if (limit === Infinity || response.body === null || BODILESS.has(response.status)) {
        return response;
      }
      const declared = Number(response.headers.get('content-length') ?? NaN);
      if (declared > left) {
        void response.body.cancel().catch(() => undefined);
        throw fail(new ResponseTooLarge(limit));
      }
      const counter = new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          left -= chunk.byteLength;
          if (left < 0) controller.error(fail(new ResponseTooLarge(limit)));
          else controller.enqueue(chunk);
        },
      });
      return new Response(response.body.pipeThrough(counter), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };

    const send = async (hop: Hop): Promise<Response> => {
      const method = (hop.init.method ?? 'GET').toUpperCase();
      const contentType = new Headers(hop.init.headers).get('content-type') ?? undefined;
      last = { url: hop.url, method, contentType, status: undefined };
      try {
        const response = await fetch(hop.url, {
          ...hop.init,
          redirect: 'manual',
          // The `undici` package's Agent and Node's bundled undici are two copies of one
          // major version (`checkUndiciMajor`): the same dispatcher interface, two classes.
          // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
          dispatcher: await dispatcher(),
        });
        last = { ...last, status: response.status };
        return response;
      } catch (error) {
        const own = egressFailure(error);
        throw own === undefined ? error : fail(own);
      }
    };

    const guarded: GuardedFetch = async (input, init = {}) => {
      const first = new URL(input);
      try {
        this.check(first);
      } catch (error) {
        throw error instanceof EgressRefused ? fail(error) : error;
      }
      let hop: Hop = { url: first, init };
      for (let followed = 0; ; followed += 1) {
        const response = await send(hop);
        const location = response.headers.get('location');
        if (!isRedirect(response.status, location)) return counted(response);
        await response.body?.cancel().catch(() => undefined);
        const next = nextHop(first, hop, response.status, location, followed);
        if (next instanceof EgressRefused) throw fail(next);
        hop = next;
      }
    };

    return {
      fetch: guarded,
      signal: aborter.signal,
      failure: () => failure,
      lastRequest: () => last,
      close: async () => {
        await agent?.then((made) => made.destroy()).catch(() => undefined);
      },
    };
  }

  /** @throws EgressRefused when `host` is a literal address the guard refuses. */
  #checkLiteral(host: string): void {
    if (isIP(host) === 0) return;
    const decision = this.decide(host);
    if (!decision.allowed) {
      throw new EgressRefused(
        'address',
        host,
        `${host} is refused (${decision.class})`,
        decision.class,
      );
    }
  }

  /** The connector of one exchange: literal addresses checked here, names in the lookup. */
  #connector(
    build: typeof buildConnector,
    fail: (error: EgressRefused) => EgressRefused,
  ): buildConnector.connector {
    const lookup: LookupFunction = (hostname, options, callback) => {
      this.#lookup(hostname, { ...options, all: true }, (error, found) => {
        if (error !== null) {
          callback(error, '');
          return;
        }
        const addresses: LookupAddress[] = Array.isArray(found)
          ? found
          : [{ address: found, family: isIP(found) }];
        const decided = addresses.map((entry) => ({ entry, decision: this.decide(entry.address) }));
        const allowed = decided
          .filter(({ decision }) => decision.allowed)
          .map(({ entry }) => entry);
        const first = allowed[0];
        if (first === undefined) {
          const refused = decided.find(({ decision }) => !decision.allowed)?.decision;
          const addressClass = refused?.allowed === false ? refused.class : 'invalid';
          callback(
            fail(
              new EgressRefused(
                'address',
                hostname,
                `${hostname} resolves only to refused addresses (${addressClass})`,
                addressClass,
              ),
            ),
            '',
          );
          return;
        }
        // Only the allowed addresses reach the socket, which tries them in turn.
        if (options.all === true) callback(null, allowed);
        else callback(null, first.address, first.family);
      });
    };
    const base = build({ lookup });
    return (options, callback) => {
      try {
        this.#checkLiteral(options.hostname);
      } catch (error) {
        callback(error instanceof EgressRefused ? fail(error) : (error as Error), null);
        return;
      }
      base(options, callback);
    };
  }
}
