/**
 * What a session token stands on. A token verifies for its hour, but it
 * stops working as soon as what it was minted under goes away:
 *
 * - a token an install minted (POST /sessions, GET /sessions/{id}/token) carries a tag of
 *   the install key it was minted under (`ikt`); once the key is rotated or revoked the
 *   tag no longer matches the install's key and the token is refused;
 * - every token of a session of a deleted install is refused;
 * - a token the console minted (`console:<user>`) is refused once the user is no longer
 *   a member of the tenant.
 *
 * A refusal is a 401 `invalid_token`, like any token that does not verify. Appends are the
 * hot path, so a session's install is remembered for good (it never changes) and the
 * install's key and tombstone for `STANDING_TTL_MS`: another process's rotation takes
 * effect here within that time, one made in this process at once (`forgetInstall`).
 * Memberships are read on every request of a console-minted token, which are few.
 *
 * An install record is never removed (a deleted install is a tombstone, decisions row
 * 76), so a session whose install cannot be found was written around the service; such a
 * token is judged by its signature alone.
 */
import { hash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { Unauthenticated } from '../errors.ts';
import type { ControlStore } from '../storage/control-store.ts';
import type { SessionDirectory } from './directory.ts';

/** How long what is known of an install's key and tombstone is trusted, in ms. */
export const STANDING_TTL_MS = 1_000;
/** Sessions and installs remembered at most; past this the memory starts afresh. */
const REMEMBERED = 10_000;

/** The part of a verified session token its standing depends on. */
export interface TokenGround {
  readonly session: string;
  readonly producer: string;
  readonly tenant: string | null;
  /** The tag of the install key the token was minted under, when an install minted it. */
  readonly installKey: string | undefined;
}

interface InstallState {
  readonly keyTag: string | null;
  readonly deleted: boolean;
  readonly at: number;
}

/**
 * The tag a token carries of the install key it was minted under: a short digest of the
 * key's stored hash, so the token reveals nothing usable of the key.
 */
export function installKeyTag(keyHash: string): string {
  return hash('sha256', `session-token/install-key/${keyHash}`, 'base64url').slice(0, 22);
}

export interface TokenStandingOptions {
  readonly control: ControlStore;
  readonly directory: SessionDirectory;
  readonly clock: Clock;
}

/** The install a session belongs to, and its tenant. */
interface SessionOwner {
  readonly install: string;
  readonly tenant: string;
}

/** Checks what session tokens stand on; see the module comment. */
export class TokenStanding {
  readonly #options: TokenStandingOptions;
  /** Session id → its install (fixed for the session's life). */
  readonly #sessions = new Map<string, SessionOwner>();
  /**
   * Install id → the one owner its sessions share: an install has many sessions, and a
   * copy of its ids for each would be held for every session remembered.
   */
  readonly #owners = new Map<string, SessionOwner>();
  /** Install id → its key tag and tombstone, as last read (install ids are unique). */
  readonly #installs = new Map<string, InstallState>();
  /** Reads of an install under way, shared by the checks that wait for them. */
  readonly #reading = new Map<string, Promise<InstallState | null>>();
  /** Bumped by `forgetInstall`, so a read begun before the change is not kept. */
  #forgets = 0;

  constructor(options: TokenStandingOptions) {
    this.#options = options;
  }

  /** @throws Unauthenticated when what the token stands on is gone. */
  async check(ground: TokenGround): Promise<void> {
    const owner = await this.#sessionOwner(ground.session);
    if (owner !== null) {
      const install = await this.#install(owner.tenant, owner.install);
      if (install?.deleted === true) throw refused('the install of its session was deleted');
      if (ground.installKey !== undefined && install?.keyTag !== ground.installKey) {
        throw refused('the install key it was minted under was rotated or revoked');
      }
    }
    if (ground.producer.startsWith('console:') && ground.tenant !== null) {
      const user = ground.producer.slice('console:'.length);
      const member = await this.#options.control.get('membership', ground.tenant, user);
      if (member === null) throw refused(`${user} is no longer a member of the tenant`);
    }
  }

  /** Drops what is known of an install: its key or tombstone just changed in this process. */
  forgetInstall(install: string): void {
    this.#forgets += 1;
    this.#installs.delete(install);
    this.#reading.delete(install);
  }

  async #sessionOwner(session: string) {
    const known = this.#sessions.get(session);
    if (known !== undefined) return known;
    const found = await this.#options.directory.get(session);
    if (found === null) return null;
    if (this.#sessions.size >= REMEMBERED) {
      this.#sessions.clear();
      this.#owners.clear();
    }
    const { install, tenant } = found.value;
    let owner = this.#owners.get(install);
    if (owner?.tenant !== tenant) {
      owner = { install, tenant };
      this.#owners.set(install, owner);
    }
    this.#sessions.set(session, owner);
    return owner;
  }

  /**
   * The install's key tag and tombstone, read at most once per `STANDING_TTL_MS`: the
   * appends that find the entry stale at once share one read, instead of each reading the
   * same row (a busy install's sessions otherwise read it a hundred times a second).
   */
  #install(tenant: string, install: string): Promise<InstallState | null> {
    const known = this.#installs.get(install);
    if (known !== undefined && this.#options.clock.now() - known.at < STANDING_TTL_MS) {
      return Promise.resolve(known);
    }
    let reading = this.#reading.get(install);
    if (reading === undefined) {
      const read = this.#readInstall(tenant, install).finally(() => {
        if (this.#reading.get(install) === read) this.#reading.delete(install);
      });
      reading = read;
      this.#reading.set(install, read);
    }
    return reading;
  }

  async #readInstall(tenant: string, install: string): Promise<InstallState | null> {
    const now = this.#options.clock.now();
    const forgets = this.#forgets;
    const stored = await this.#options.control.get('install', tenant, install);
    if (stored === null) return null;
    const state: InstallState = {
      keyTag: stored.value.keyHash === null ? null : installKeyTag(stored.value.keyHash),
      deleted: stored.value.deleted,
      at: now,
    };
    // A change made here since the read began may not be in it: answer it, keep it not.
    if (forgets !== this.#forgets) return state;
    if (this.#installs.size >= REMEMBERED) this.#installs.clear();
    this.#installs.set(install, state);
    return state;
  }
}

function refused(reason: string): Unauthenticated {
  return new Unauthenticated(`the token no longer stands: ${reason}`, true);
}
