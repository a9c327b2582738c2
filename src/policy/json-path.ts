/**
 * Dotted arg lookup and JSON deep equality: the two ways a policy reads a call's
 * arguments (2.6; decisions row 26; notes "Ours": deep equality, no type coercion).
 *
 * Both take anything and never throw: the arguments come from a model and may be any
 * JSON, or not an object at all. Only own properties are read, so an arg named
 * `constructor` or `__proto__` finds what the call sent and never what
 * `Object.prototype` carries.
 */

/** A JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The segments of a dotted arg. Row 26 chose dots for nesting, so a property whose own
 * name holds a dot cannot be named by a policy.
 */
export function argSegments(arg: string): readonly string[] {
  return arg.split('.');
}

/**
 * The value at a dotted arg, or `undefined` when the call does not carry it: a segment
 * is missing, or a step on the way is not an object (arrays are not walked).
 * JSON has no `undefined`, so it can stand for "absent" (row 26: absent matches nothing).
 */
export function lookupArg(args: unknown, arg: string): unknown {
  let current = args;
  for (const segment of argSegments(arg)) {
    if (!isJsonObject(current) || !Object.hasOwn(current, segment)) {
      return undefined;
    }
    current = current[segment];
  }
  return current;
}

/**
 * JSON deep equality without coercion: `1` is not `"1"`, `0` is not `false`, `null` is
 * only `null`; objects are equal when they hold the same keys with equal values, in any
 * order; arrays when they hold equal values in the same order.
 */
export function jsonEqual(left: unknown, right: unknown): boolean {
  if (left === right) {
    return true;
  }
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) {
    return false;
  }
  if (Array.isArray(left) || Array.isArray(right)) {
    return (
      Array.isArray(left) &&
      Array.isArray(right) &&
      left.length === right.length &&
      left.every((value, index) => jsonEqual(value, right[index]))
    );
  }
  const leftRecord = left as Readonly<Record<string, unknown>>;
  const rightRecord = right as Readonly<Record<string, unknown>>;
  const keys = Object.keys(leftRecord);
  return (
    keys.length === Object.keys(rightRecord).length &&
    keys.every(
      (key) => Object.hasOwn(rightRecord, key) && jsonEqual(leftRecord[key], rightRecord[key]),
    )
  );
}

/**
 * The `project` args' values for evidence (part B), keyed by the dotted arg; absent args
 * are left out. `Object.fromEntries` defines own properties, so an arg named
 * `__proto__` lands as a key and never as a prototype.
 */
export function projectArgs(
  args: unknown,
  project: readonly string[],
): Readonly<Record<string, unknown>> {
  return Object.fromEntries(
    project.flatMap((arg) => {
      const value = lookupArg(args, arg);
      return value === undefined ? [] : [[arg, value] as const];
    }),
  );
}
