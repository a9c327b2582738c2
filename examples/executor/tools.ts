/**
 * Step 5: the vendor's tools. Replace these handlers with calls into your own systems;
 * each takes the call's arguments (already checked against the tool's `input_schema` by
 * the service) and answers the text the model reads, or throws to report a failure.
 */

import type { Completion } from '@agent-session-service/client';

type Handler = (args: Record<string, unknown>) => Promise<string> | string;

/** The tools this executor performs, by the names of the vendor document. */
const HANDLERS: Readonly<Record<string, Handler>> = {
  lookup_order: (args) => `order ${String(args.order_id)} shipped on Monday`,
  refund: (args) => `refunded ${String(args.amount)}`,
};

/** Performs `tool` with `args`; a failure is a completion with `ok: false`, not a throw. */
export async function perform(tool: string, args: unknown): Promise<Completion> {
  const handler = HANDLERS[tool];
  if (handler === undefined) return { ok: false, result: null, error: `no handler for ${tool}` };
  try {
    const text = await handler(typeof args === 'object' && args !== null ? { ...args } : {});
    return { ok: true, result: { content: [{ type: 'text', text }] }, error: null };
  } catch (error) {
    return { ok: false, result: null, error: error instanceof Error ? error.message : 'failed' };
  }
}
