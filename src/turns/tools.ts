/**
 * The tools a session's model may call, as the authorizer decides them: the vendor's
 * tools of the document pinned at open (§3.5), and each extra tool as
 * `<connection>__<tool>` (row 27) with the input schema of the connection's catalog,
 * which session start checked against the live server (row 47). Each tool's deadline span
 * and result limit come from where it is stated: the vendor tool (2.5) or the connection
 * (2.12), null meaning 60 s and 64 KiB (rows 17, 18).
 *
 * The tenant's policies compile against this surface once per driver run. A policy whose
 * tool left the surface (a connection unlinked since) cannot hold any call, so it is
 * dropped; one that no longer compiles against its tool's schema disables the tool.
 */
import { InvalidRequest } from '../errors.ts';
import { Authorizer, type AuthorizedTool } from '../policy/authorizer.ts';
import { compilePolicies } from '../policy/compile.ts';
import type { SessionConfigValue } from '../resources/types.ts';
import { extraToolName } from '../consent/surface.ts';
import { DEFAULT_TIMEOUT_MS, parseDuration } from '../schemas/duration.ts';
import { VENDOR_BOUNDS } from '../schemas/vendor.ts';
import type { ControlStore } from '../storage/control-store.ts';

const span = (timeout: string | null): number =>
  (timeout === null ? null : parseDuration(timeout)) ?? DEFAULT_TIMEOUT_MS;

/** The session's authorizer over its pinned document and its tenant's connections. */
export async function sessionAuthorizer(
  control: ControlStore,
  tenant: string,
  document: SessionConfigValue,
  executor: string | null,
): Promise<Authorizer> {
  const tools: AuthorizedTool[] = document.vendor.tools.map((tool) => ({
    name: tool.name,
    inputSchema: tool.input_schema,
    source: 'vendor',
    timeoutMs: span(tool.timeout),
    resultLimit: tool.result_limit ?? VENDOR_BOUNDS.defaultResultLimit,
  }));
  for (const extra of document.tenant.extra_tools) {
    const connection = await control.get('connection', tenant, extra.connection);
    const tool = connection?.value.catalog?.tools.find((t) => t.name === extra.tool);
    if (connection === null || tool === undefined) continue;
    tools.push({
      name: extraToolName(extra.connection, extra.tool),
      inputSchema: tool.inputSchema,
      source: { connection: extra.connection, tool: extra.tool },
      timeoutMs: span(connection.value.timeout),
      resultLimit: connection.value.result_limit ?? VENDOR_BOUNDS.defaultResultLimit,
    });
  }
  const names = new Set(tools.map((tool) => tool.name));
  const policies = document.tenant.policies.filter((policy) => names.has(policy.tool));
  try {
    return new Authorizer(compilePolicies(policies, tools), tools, executor);
  } catch (error) {
    // Consent compiled these policies against this surface; one that no longer compiles
    // (a catalog's schema changed under it) fails closed: its tool is disabled.
    if (!(error instanceof InvalidRequest)) throw error;
    const broken = new Set(
      (error.errors ?? []).map((fault) => Number(/^policies\.(\d+)/.exec(fault.field)?.[1])),
    );
    const closed = policies.map((policy, index) =>
      broken.has(index) ? { tool: policy.tool, allow: false } : policy,
    );
    return new Authorizer(compilePolicies(closed, tools), tools, executor);
  }
}
