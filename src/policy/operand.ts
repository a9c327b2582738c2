/**
 * Whether an item's operand fits its op (decisions row 25) and its arg's declared
 * schema (row 26; notes "Ours": operand types must fit, `lt`/`gt` only on numbers).
 *
 * The rules, each a 400 naming the field:
 * - `is`/`is_not`: a scalar (string, finite number, boolean or null);
 *   `in`/`not_in`: a non-empty array of scalars; `lt`/`gt`: a finite number.
 * - Where the property declares `type`, every scalar must be of one of its types
 *   (`integer` takes integral numbers only), and `lt`/`gt` need `number` or `integer`
 *   among them. Where it declares none, any operand of the right shape fits.
 * - Where the property declares `enum` or `const`, every `is`/`is_not`/`in`/`not_in`
 *   scalar must be one of those values: one outside them could never match, so it is
 *   a slip the tenant should hear about. `lt`/`gt` bounds are not held to the enum.
 */
import { jsonEqual } from './json-path.ts';
import type { PropertyShape } from './schema-path.ts';
import type { CompiledItem, PolicyItemInput, Scalar } from './types.ts';

/** A refusal relative to the item: `suffix` is appended to `…items.<n>`. */
export interface OperandFault {
  readonly suffix: string;
  readonly reason: string;
}

export type OperandFit =
  | { readonly ok: true; readonly item: CompiledItem }
  | { readonly ok: false; readonly fault: OperandFault };

function isScalar(value: unknown): value is Scalar {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function hasType(value: Scalar, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
    case 'string':
    case 'number':
      return typeof value === type;
    case 'integer':
      return Number.isInteger(value);
    default:
      // A scalar is never an object or an array; an unknown type name takes nothing.
      return false;
  }
}

/** Why a scalar does not fit the property, or null when it fits. */
function scalarFault(value: Scalar, arg: string, shape: PropertyShape): string | null {
  if (shape.types !== null && !shape.types.some((type) => hasType(value, type))) {
    return `must fit ${arg}, which is declared ${shape.types.join(' or ')}`;
  }
  if (shape.values !== null && !shape.values.some((allowed) => jsonEqual(allowed, value))) {
    return `must be one of the values ${arg} allows: ${JSON.stringify(shape.values)}`;
  }
  return null;
}

const fault = (suffix: string, reason: string): OperandFit => ({
  ok: false,
  fault: { suffix, reason },
});

/** Checks `item`'s operand against its op and its arg's shape, and compiles it. */
export function fitOperand(item: PolicyItemInput, index: number, shape: PropertyShape): OperandFit {
  const { arg, op } = item;
  const value = item.operand.value;
  switch (op) {
    case 'is':
    case 'is_not': {
      if (!isScalar(value)) {
        return fault('operand.value', `must be a string, number, boolean or null when op is ${op}`);
      }
      const reason = scalarFault(value, arg, shape);
      return reason === null
        ? { ok: true, item: { index, arg, op, value } }
        : fault('operand.value', reason);
    }
    case 'in':
    case 'not_in': {
      if (!Array.isArray(value)) {
        return fault('operand.value', `must be an array when op is ${op}`);
      }
      if (value.length === 0) {
        return fault('operand.value', 'must hold at least one value');
      }
      const list: Scalar[] = [];
      for (const [position, element] of (value as readonly unknown[]).entries()) {
        if (!isScalar(element)) {
          return fault(
            `operand.value.${position}`,
            `must be a string, number, boolean or null when op is ${op}`,
          );
        }
        const reason = scalarFault(element, arg, shape);
        if (reason !== null) {
          return fault(`operand.value.${position}`, reason);
        }
        list.push(element);
      }
      return { ok: true, item: { index, arg, op, value: list } };
    }
    case 'lt':
    case 'gt': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        return fault('operand.value', `must be a number when op is ${op}`);
      }
      const types = shape.types;
      if (types !== null && !types.includes('number') && !types.includes('integer')) {
        return fault('op', `cannot be ${op} on ${arg}, which is declared ${types.join(' or ')}`);
      }
      return { ok: true, item: { index, arg, op, value } };
    }
    default:
      // Unreachable for a parsed policy; kept so an unparsed one is refused, not crashed on.
      return fault('op', 'must be one of is, is_not, in, not_in, lt, gt');
  }
}
