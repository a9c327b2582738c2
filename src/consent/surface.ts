/**
 * Whether a tenant config resolves under the tenant and fits the vendor's document
 * (interface 2.6, 3.2, §7; decisions rows 23 to 27 and 93), checked at consent and at
 * `PUT /installs/{id}`.
 *
 * Resolves: the inference option, each extra tool's connection, its tool in the catalog
 * kept at link time, and every credential they name are the tenant's. Fits: the policies
 * compile (`compilePolicies`) against the surface the model sees, the vendor's tools and
 * each extra tool as `<connection>__<tool>` (row 27), no two of them under one name.
 * Session start, not consent, checks the live catalogs (4.3).
 */
import type { CodeOf } from '../error-codes.ts';
import { InvalidRequest, isServiceError } from '../errors.ts';
import { compilePolicies } from '../policy/compile.ts';
import type { SurfaceTool } from '../policy/types.ts';
import type { ConnectionValue } from '../resources/types.ts';
import type { ControlStore } from '../storage/control-store.ts';
import type { FieldError } from '../schemas/problem.ts';
import type { TenantConfig } from '../schemas/tenant.ts';
import type { VendorDocument } from '../schemas/vendor.ts';

/** The outcome of both checks; each refusal is the 400 naming the field and reason. */
export interface ConfigCheck {
  /** Row 93 "resolves": null, or a reference that is not the tenant's. */
  readonly unresolved: InvalidRequest | null;
  /** Row 93 "fits": null, or a policy or extra tool that does not fit the surface. */
  readonly unfit: InvalidRequest | null;
}

/** Row 27: the name the model sees an extra tool by. */
export function extraToolName(connection: string, tool: string): string {
  return `${connection}__${tool}`;
}

function refusal(code: CodeOf<400>, faults: readonly FieldError[]): InvalidRequest | null {
  const [first] = faults;
  if (first === undefined) return null;
  return new InvalidRequest(code, `${first.field} ${first.reason}`, {
    field: first.field,
    reason: first.reason,
    errors: faults,
  });
}

async function holdsSecret(store: ControlStore, tenant: string, name: string): Promise<boolean> {
  return (await store.get('secret', tenant, name)) !== null;
}

/** Row 93 "resolves", collecting every fault; answers the surface when all resolve. */
async function resolve(
  store: ControlStore,
  tenant: string,
  vendor: VendorDocument,
  config: TenantConfig,
): Promise<{ faults: FieldError[]; surface: SurfaceTool[] }> {
  const faults: FieldError[] = [];
  const inference = await store.get('inference', tenant, config.inference);
  if (inference === null) {
    faults.push({ field: 'body.inference', reason: 'names no inference option of this tenant' });
  } else if (
    inference.value.credential !== null &&
    !(await holdsSecret(store, tenant, inference.value.credential))
  ) {
    const reason = `names an option whose credential ${inference.value.credential} the tenant does not hold`;
    faults.push({ field: 'body.inference', reason });
  }
  const surface: SurfaceTool[] = vendor.tools.map((tool) => ({
    name: tool.name,
    inputSchema: tool.input_schema,
    source: 'vendor',
  }));
  const connections = new Map<string, ConnectionValue | null>();
  for (const [index, extra] of config.extra_tools.entries()) {
    const at = `body.extra_tools.${index}`;
    if (!connections.has(extra.connection)) {
      const found = await store.get('connection', tenant, extra.connection);
      connections.set(extra.connection, found?.value ?? null);
    }
    const connection = connections.get(extra.connection) ?? null;
    if (connection === null) {
      faults.push({ field: `${at}.connection`, reason: 'names no connection of this tenant' });
      continue;
    }
    const credential = connection.auth.credential;
    if (credential !== undefined && !(await holdsSecret(store, tenant, credential))) {
      const reason = `names a connection whose credential ${credential} the tenant does not hold`;
      faults.push({ field: `${at}.connection`, reason });
    }
    const tool = connection.catalog?.tools.find((candidate) => candidate.name === extra.tool);
    if (tool === undefined) {
      const reason =
        connection.catalog === null
          ? `cannot be checked: connection ${extra.connection} has no catalog until it is authorized`
          : `names no tool of connection ${extra.connection}'s catalog`;
      faults.push({ field: `${at}.tool`, reason });
      continue;
    }
    surface.push({
      name: extraToolName(extra.connection, extra.tool),
      inputSchema: tool.inputSchema,
      source: { connection: extra.connection, tool: extra.tool },
    });
  }
  return { faults, surface };
}

/** Row 27: an extra tool whose model-visible name is already a vendor tool's. */
function clashes(vendor: VendorDocument, config: TenantConfig): FieldError[] {
  const vendorNames = new Set(vendor.tools.map((tool) => tool.name));
  return config.extra_tools.flatMap((extra, index) => {
    const name = extraToolName(extra.connection, extra.tool);
    return vendorNames.has(name)
      ? [{ field: `body.extra_tools.${index}`, reason: `is seen as ${name}, a vendor tool's name` }]
      : [];
  });
}

/** Checks `config` under `tenant` against the vendor document (row 93). */
export async function checkConfig(
  store: ControlStore,
  tenant: string,
  vendor: VendorDocument,
  config: TenantConfig,
): Promise<ConfigCheck> {
  const { faults, surface } = await resolve(store, tenant, vendor, config);
  const unresolved = refusal('unresolved_reference', faults);
  // The machine refuses what does not resolve first; fit is judged on a resolved surface.
  if (unresolved !== null) return { unresolved, unfit: null };
  const clash = refusal('tool_name_clash', clashes(vendor, config));
  if (clash !== null) return { unresolved: null, unfit: clash };
  try {
    compilePolicies(config.policies, surface, { field: 'body.policies' });
    return { unresolved: null, unfit: null };
  } catch (error) {
    if (isServiceError(error) && error instanceof InvalidRequest) {
      return { unresolved: null, unfit: error };
    }
    throw error;
  }
}

/** `checkConfig`, throwing the first refusal (for `PUT /installs/{id}`). */
export async function requireConfig(
  store: ControlStore,
  tenant: string,
  vendor: VendorDocument,
  config: TenantConfig,
): Promise<void> {
  const check = await checkConfig(store, tenant, vendor, config);
  const refused = check.unresolved ?? check.unfit;
  if (refused !== null) throw refused;
}
