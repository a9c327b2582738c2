/**
 * Installs and connections for the session tests, written straight into the control store
 * as consent and `PUT /connections/{id}` would leave them (an install under its key's
 * hash, a connection with the catalog discovered live from its server).
 *
 * Until the consent flow is the way tests get an install, this stands in for it: an
 * install value, its `key` index (SHA-256 of a fresh `ik_…` key) and a tenant.
 */
import { randomUUID } from 'node:crypto';
import { issueCredential } from '../../src/auth/opaque.ts';
import { systemClock, systemEntropy } from '../../src/clock.ts';
import { discoverCatalog } from '../../src/mcp/discover.ts';
import { Egress } from '../../src/net/egress.ts';
import type { ConnectionValue, InstallValue } from '../../src/resources/types.ts';
import { INDEX, scoped } from '../../src/resources/types.ts';
import type { ExtraTool, TenantConfig } from '../../src/schemas/tenant.ts';
import type { VendorDocument } from '../../src/schemas/vendor.ts';
import type { Versioned } from '../../src/storage/control-store.ts';
import type { TestApp } from './app.ts';

/** An install a test holds the key of. */
export interface TestInstall {
  readonly id: string;
  readonly tenant: string;
  /** The install key `ik_…`. */
  readonly key: string;
  /** `{ authorization: 'Bearer ik_…' }`. */
  readonly headers: { readonly authorization: string };
}

/** A small vendor document with one tool. */
export function vendorDocument(name = 'Test app'): VendorDocument {
  return {
    appdoc: 1,
    name,
    description: 'An app for session tests',
    tools: [
      {
        name: 'lookup',
        description: 'Looks a word up',
        input_schema: { type: 'object', properties: { word: { type: 'string' } } },
        output_schema: { type: 'object' },
        result_limit: null,
        timeout: null,
      },
    ],
  };
}

export interface InstallOptions {
  readonly tenant?: string;
  readonly extraTools?: readonly ExtraTool[];
  readonly vendor?: VendorDocument;
}

/** Writes an install with a fresh key, as a consent would. */
export async function createInstall(
  harness: Pick<TestApp, 'stores'>,
  options: InstallOptions = {},
): Promise<TestInstall> {
  const tenant = options.tenant ?? `t-${randomUUID().slice(0, 8)}`;
  const id = `in-${randomUUID()}`;
  const key = issueCredential('ik', systemEntropy);
  const config: TenantConfig = {
    inference: 'default',
    extra_tools: [...(options.extraTools ?? [])],
    policies: [],
  };
  const value: InstallValue = {
    id,
    tenant,
    vendor: options.vendor ?? vendorDocument(),
    vendorHash: 'a'.repeat(64),
    config,
    deleted: false,
    keyHash: key.hash,
    request: `req-${randomUUID()}`,
  };
  await harness.stores.control.write([
    {
      op: 'put',
      kind: 'install',
      scope: tenant,
      id,
      value,
      expect: 0,
      index: {
        [INDEX.key]: [key.hash],
        [INDEX.inference]: [scoped(tenant, 'default')],
        [INDEX.connection]: [
          ...new Set(config.extra_tools.map((t) => scoped(tenant, t.connection))),
        ],
      },
    },
  ]);
  return { id, tenant, key: key.value, headers: { authorization: `Bearer ${key.value}` } };
}

/** Reads the install back as the routes see it. */
export async function readInstall(
  harness: TestApp,
  install: TestInstall,
): Promise<Versioned<InstallValue>> {
  const stored = await harness.stores.control.get<InstallValue>(
    'install',
    install.tenant,
    install.id,
  );
  if (stored === null) throw new Error(`install ${install.id} is not stored`);
  return stored;
}

/**
 * Links a connection with no credential to the MCP server at `endpoint`, keeping the
 * catalog discovered from it now, as `PUT /connections/{id}` does (3.3).
 */
export async function linkConnection(
  harness: TestApp,
  tenant: string,
  name: string,
  endpoint: string,
): Promise<ConnectionValue> {
  const catalog = await discoverCatalog({
    endpoint,
    timeoutMs: 5_000,
    clock: systemClock,
    egress: new Egress({ allow: harness.deps.egressAllow }),
  });
  const value: ConnectionValue = {
    name,
    endpoint,
    auth: { kind: 'none' },
    catalog: {
      tools: catalog.tools.map((tool) => ({ ...tool })),
      digest: catalog.digest,
      captured: catalog.captured,
    },
    state: 'linked',
    result_limit: null,
    timeout: '5s',
    return_to: null,
    authorize: null,
  };
  await harness.stores.control.write([
    { op: 'put', kind: 'connection', scope: tenant, id: name, value, expect: null },
  ]);
  return value;
}
