/**
 * The steps that answer a model's calls: the authorizer's decision, the deadline's
 * timeout and the call of an extra tool over MCP, each landing its record under its key
 * as every step does (`steps.ts`).
 */
import { gateClaims } from '../gate/gate.ts';
import { canonicalJson } from '../sessions/canonical-json.ts';
import { isStoredLayer, openLayer, sealLayer } from '../sessions/sealing.ts';
import { completionIdem } from '../sessions/write-filter.ts';
import { PRODUCERS, serviceRecord, stepKey } from './records.ts';
import { land, type StepContext } from './steps.ts';

/** The plain arguments of call `call` of the model.output at `cause` (part D: opened). */
async function argsOf(ctx: StepContext, cause: number, call: string): Promise<unknown> {
  const [record] = await ctx.log.read(ctx.state.session, { from: cause, limit: 1 });
  const body = JSON.parse(record?.body ?? '{}') as {
    tool_calls?: { id?: unknown; args?: unknown }[];
  };
  const stored = body.tool_calls?.find((c) => c.id === call)?.args;
  if (!isStoredLayer(stored)) return stored ?? {};
  const opened = openLayer(stored, ctx.tenantKey);
  if (!opened.ok) throw new Error(`the arguments of call ${call} do not open: ${opened.error}`);
  return opened.value;
}

/**
 * Decides call `call` of the round: `invoke.allowed` addressed to its target, with the
 * sealed arguments, the evidence, its deadline span, result limit and the service's gate;
 * or `invoke.denied` with the reason, the deciding item and the evidence, which the model
 * sees as an error result.
 */
export async function authorize(ctx: StepContext, call: string, tool: string): Promise<void> {
  const { turn, round, cause } = ctx.state.context;
  if (turn === null || cause === null) return;
  const args = await argsOf(ctx, cause, call);
  const decision = ctx.authorizer.decide(tool, args);
  const key = stepKey.answer(turn, round, call);
  if (!decision.allowed) {
    const body = {
      turn,
      call,
      tool,
      reason: decision.reason,
      item: decision.item,
      evidence: decision.evidence,
    };
    await land(ctx, serviceRecord('invoke.denied', PRODUCERS.authorizer, key, body));
    return;
  }
  const gate = await ctx.signGate(
    gateClaims({
      sid: ctx.state.session,
      cause,
      call,
      tool,
      args,
      policy: ctx.authorizer.plan.digest,
      items: decision.matched,
    }),
  );
  const plain = {
    turn,
    cause,
    call,
    tool,
    target: decision.target,
    args,
    evidence: decision.evidence,
    timeout: decision.tool.timeoutMs,
    result_limit: decision.tool.resultLimit,
    gate,
  };
  const record = {
    ...serviceRecord('invoke.allowed', PRODUCERS.authorizer, key, {
      ...plain,
      args: sealLayer(args, ctx.tenantKey),
    }),
    to: decision.target,
  };
  // The gate's `iat` differs on a rerun: the fingerprint leaves it out, so a rerun replays.
  await land(ctx, record, { ...plain, gate: null });
}

/**
 * Row 58: completes an allowed call its deadline passed with `invoke.completed {ok: false,
 * error: timeout}`, in the call's one completion slot `call:<cause>`: whichever of this and
 * the executor's completion lands first stands, and the other is refused (409).
 */
export async function expire(ctx: StepContext, cause: number): Promise<void> {
  const body = { ok: false, result: null, error: 'timeout', truncated: false };
  await land(ctx, serviceRecord('invoke.completed', PRODUCERS.turn, completionIdem(cause), body));
}

/**
 * Row 89: performs an allowed call of an extra tool over MCP and lands its
 * `invoke.completed` as `service:mcp` in the call's one slot `call:<cause>`, within what is
 * left of its deadline. A server that is down or refuses completes it `ok: false` with
 * the reason, and the turn goes on. The result is sealed (part D) and marked `truncated`
 * when it is longer than the call's `result_limit` (row 17).
 */
export async function perform(
  ctx: StepContext,
  step: {
    readonly cause: number;
    readonly call: string;
    readonly tool: string;
    readonly deadline: number;
  },
): Promise<void> {
  const tool = ctx.authorizer.tool(step.tool);
  const output = ctx.state.context.cause;
  if (output === null) return;
  const outcome =
    tool === undefined || tool.source === 'vendor'
      ? { ok: false, result: null, error: `${step.tool} is not an extra tool of the session` }
      : await ctx.callTool({
          tenant: ctx.tenant,
          connection: tool.source.connection,
          tool: tool.source.tool,
          args: await argsOf(ctx, output, step.call),
          timeoutMs: Math.max(1, Math.min(tool.timeoutMs, step.deadline - ctx.clock.now())),
        });
  const size =
    outcome.result === null ? 0 : Buffer.byteLength(canonicalJson(outcome.result) ?? '', 'utf8');
  const plain = {
    ok: outcome.ok,
    result: outcome.result,
    error: outcome.error,
    truncated: size > (tool?.resultLimit ?? Infinity),
  };
  const body = {
    ...plain,
    result: outcome.result === null ? null : sealLayer(outcome.result, ctx.tenantKey),
  };
  const record = serviceRecord('invoke.completed', PRODUCERS.mcp, completionIdem(step.cause), body);
  await land(ctx, record, plain);
}
