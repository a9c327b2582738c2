/**
 * Turns a ZodError into the field/reason list of a 400 problem (interface §7, decisions
 * row 82): one entry per failed field, as a dotted path from the request part
 * (`body.tools.3.name`) and a reason in words a caller can act on.
 *
 * Messages our schemas set themselves are kept. Zod's stock English messages
 * ("Too big: expected string to have <=128 characters") are rewritten from the issue's
 * structured members ("must be at most 128 characters"); an unknown key becomes an
 * entry of its own; a failed union reports the one branch that got deepest into the
 * input, or speaks for the value when no branch did.
 */
import { z } from 'zod';
import type { FieldError } from './problem.ts';

/** The part of a request a field lives in; the first segment of every field path. */
export type RequestPart = 'body' | 'query' | 'params' | 'headers';

type Issue = z.core.$ZodIssue;

const stockMessage = z.locales.en().localeError;

/** Zod's stock text for an issue; `invalid_type` names the received type, which we lack. */
function isStock(issue: Issue): boolean {
  if (issue.code === 'invalid_type')
    return /^Invalid input: expected \S+, received \S+$/.test(issue.message);
  const stock = stockMessage(issue as z.core.$ZodRawIssue);
  const text = typeof stock === 'string' ? stock : stock?.message;
  return text === issue.message;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  record: 'an object',
  null: 'null',
  never: 'absent',
};

const FORMAT_WORDS: Readonly<Record<string, string>> = {
  url: 'a URL',
  date: 'a day written YYYY-MM-DD',
  datetime: 'an RFC 3339 timestamp',
  email: 'an email address',
  uuid: 'a UUID',
  lowercase: 'lowercase',
};

function quantity(origin: string, amount: number | bigint): string {
  const plural = amount === 1 || amount === 1n ? '' : 's';
  if (origin === 'string') return `${amount} character${plural}`;
  if (origin === 'array' || origin === 'set') return `${amount} item${plural}`;
  return String(amount);
}

/** A reason from the issue's members, for issues that carry zod's stock text. */
function stockReason(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.expected === 'nonoptional' || issue.message.endsWith('received undefined'))
        return 'is required';
      return `must be ${TYPE_WORDS[issue.expected] ?? issue.expected}`;
    case 'too_big': {
      const verb = issue.origin === 'array' || issue.origin === 'set' ? 'hold' : 'be';
      const bound = issue.inclusive === false ? 'less than' : 'at most';
      return `must ${verb} ${issue.exact === true ? 'exactly' : bound} ${quantity(issue.origin, issue.maximum)}`;
    }
    case 'too_small': {
      if (issue.origin === 'string' && issue.minimum === 1 && issue.exact !== true)
        return 'must not be empty';
      const verb = issue.origin === 'array' || issue.origin === 'set' ? 'hold' : 'be';
      const bound = issue.inclusive === false ? 'more than' : 'at least';
      return `must ${verb} ${issue.exact === true ? 'exactly' : bound} ${quantity(issue.origin, issue.minimum)}`;
    }
    case 'invalid_format':
      if (issue.format === 'regex') return `must match ${issue.pattern ?? 'the expected pattern'}`;
      return `must be ${FORMAT_WORDS[issue.format] ?? `a valid ${issue.format}`}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((value) => String(value)).join(', ')}`;
    case 'invalid_union':
      if ('options' in issue && issue.options !== undefined && issue.options.length > 0) {
        return `must be one of ${issue.options.map((value) => String(value)).join(', ')}`;
      }
      return 'does not match any accepted shape';
    case 'unrecognized_keys':
      return 'is not an accepted field';
    case 'invalid_key':
      return 'has a key that is not accepted';
    case 'invalid_element':
      return 'has an element that is not accepted';
    case 'custom':
      return 'is invalid';
  }
}

function reasonOf(issue: Issue): string {
  return isStock(issue) ? stockReason(issue) : issue.message;
}

/** How far into the input a union branch got before it failed: its deepest issue path. */
function depth(branch: readonly Issue[]): number {
  return Math.max(0, ...branch.map((issue) => issue.path.length));
}

/** The failed fields of one issue, with paths relative to `base`. */
function fieldsOf(
  issue: Issue,
  base: readonly PropertyKey[],
): { path: PropertyKey[]; reason: string }[] {
  const path = [...base, ...issue.path];
  if (issue.code === 'unrecognized_keys') {
    const reason = reasonOf(issue);
    return issue.keys.map((key) => ({ path: [...path, key], reason }));
  }
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // The one branch that got deepest into the input is the shape the caller meant, and
    // its own failure says most. With no such branch the union speaks for the value.
    const deepest = Math.max(...issue.errors.map(depth));
    const closest = issue.errors.filter((branch) => depth(branch) === deepest);
    if (deepest > 0 && closest.length === 1 && closest[0] !== undefined) {
      return closest[0].flatMap((inner) => fieldsOf(inner, path));
    }
    if (!isStock(issue)) return [{ path, reason: issue.message }];
    const missing = issue.errors.every((branch) =>
      branch.every((inner) => inner.code === 'invalid_type' && reasonOf(inner) === 'is required'),
    );
    return [{ path, reason: missing ? 'is required' : 'does not match any accepted shape' }];
  }
  return [{ path, reason: reasonOf(issue) }];
}

/**
 * The failed fields of a parse, each as `{ field, reason }` with `field` a dotted path
 * under `prefix` (`body.tools.3.name`, `query.limit`). `at` places a nested parse, such
 * as one record's body checked against its kind (`[3, 'body']` gives `body.3.body.text`).
 * Duplicates are dropped; order follows the issues.
 */
export function toFieldErrors(
  error: { readonly issues: readonly Issue[] },
  prefix: RequestPart,
  at: readonly (string | number)[] = [],
): FieldError[] {
  const seen = new Set<string>();
  const fields: FieldError[] = [];
  for (const issue of error.issues) {
    for (const { path, reason } of fieldsOf(issue, at)) {
      const field = [prefix, ...path.map((segment) => String(segment))].join('.');
      const key = `${field}\u0000${reason}`;
      if (seen.has(key)) continue;
      seen.add(key);
      fields.push({ field, reason });
    }
  }
  return fields;
}
