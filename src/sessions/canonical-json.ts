/**
 * RFC 8785 canonical JSON of parsed JSON values, the text every record body is stored as
 * and every batch fingerprinted by (decisions rows 9 and 12).
 *
 * `canonicalize` (the package) is the reference: it handles anything (toJSON, boxed
 * primitives, cycles, any depth, with an explicit stack). The append path only ever
 * hands it values that came out of `JSON.parse` or a zod parse of one, for which that
 * generality costs: on batches of 100 it was a sixth of the route's time (`npm run
 * bench`). So values of that plain shape are written here, directly: sorted keys by
 * UTF-16 code unit, strings and numbers as `JSON.stringify` writes them (which is what
 * RFC 8785 §3.2.2 requires and what the package itself calls), after the same checks
 * the package makes (a lone surrogate or a non-finite number has no canonical form).
 * Anything else, and anything nested deeper than `MAX_DEPTH`, is handed to the package
 * for that subtree; the output is the package's, byte for byte (a property test holds
 * the two together).
 */
import canonicalize from 'canonicalize';

/** Deeper subtrees go to the package, whose explicit stack has no recursion limit. */
const MAX_DEPTH = 64;

class NoCanonicalForm extends Error {}

function string(value: string): string {
  if (!value.isWellFormed()) throw new NoCanonicalForm('a lone surrogate has no canonical form');
  return JSON.stringify(value);
}

/** The canonical text of `value`, or undefined where JSON has none (undefined, functions). */
function write(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case 'string':
      return string(value);
    case 'number':
      if (!Number.isFinite(value)) throw new NoCanonicalForm(`${value} has no canonical form`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'bigint':
      return canonicalize(value);
    case 'object':
      break;
  }
  if (value === null) return 'null';
  if (
    depth >= MAX_DEPTH ||
    typeof (value as { toJSON?: unknown }).toJSON === 'function' ||
    value instanceof Number ||
    value instanceof String ||
    value instanceof Boolean
  ) {
    return canonicalize(value);
  }
  if (Array.isArray(value)) {
    // Indexed, not mapped: a hole is null, as in the package (map would skip it).
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      text += `${i === 0 ? '' : ','}${write(value[i], depth + 1) ?? 'null'}`;
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = '{';
  for (const key of Object.keys(record).sort()) {
    const member = write(record[key], depth + 1);
    if (member !== undefined) text += `${text === '{' ? '' : ','}${string(key)}:${member}`;
  }
  return `${text}}`;
}

/**
 * The RFC 8785 text of `value`, exactly as `canonicalize(value)` gives it; undefined when
 * the value has no JSON form. Throws where the package throws (a lone surrogate, a
 * non-finite number, a cycle).
 */
export function canonicalJson(value: unknown): string | undefined {
  return write(value, 0);
}

function isPlainRecord(value: object): value is Record<string, unknown> {
  const prototype: unknown = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && !Object.hasOwn(value, 'toJSON');
}

/**
 * True when `a` and `b` are the same JSON value, and so have one canonical text: the
 * same primitives (`===`), arrays of the same length with the same items, plain objects
 * with the same keys and values. False when unsure (another kind of object, a `toJSON`,
 * NaN, depth past `MAX_DEPTH`). It lets the intake reuse a body's canonical text where
 * a schema parse gave back a copy of what was offered, which costs a walk with no
 * strings made instead of a second canonicalization.
 */
export function sameJson(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!sameJson(a[i], b[i], depth + 1)) return false;
    }
    return true;
  }
  if (!isPlainRecord(a) || !isPlainRecord(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    // Same count, and every key of `a` an enumerable own key of `b`: the same key sets.
    if (!Object.prototype.propertyIsEnumerable.call(b, key)) return false;
    if (!sameJson(a[key], b[key], depth + 1)) return false;
  }
  return true;
}
