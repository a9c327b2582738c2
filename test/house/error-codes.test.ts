/**
 * One catalog of error codes: `src/error-codes.ts` names every code a caller can meet,
 * with its status. The error classes take only catalog codes of their status, so the type
 * checker refuses a new code at a throw; this file refuses the ways around it.
 *
 * - A code written as a literal anywhere in src (a `code:` member, a comparison with a
 *   `.code`, the first argument of a `new` of an error class) is a catalog code, unless it
 *   belongs to one of the other vocabularies named in `OTHER_VOCABULARIES`.
 * - No cast turns a string into a catalog code.
 * - No reply is given an error status except by the problem module, which takes it from
 *   the error, and so from the catalog.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_CODE_NAMES, statusOf } from '../../src/error-codes.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SRC = path.join(ROOT, 'src');
const CATALOG = 'src/error-codes.ts';
/** The one module that sets an error status on a reply (`sendProblem`). */
const PROBLEM_MODULE = 'src/http/problem.ts';

/** snake_case words that are codes of something else, and what. */
const OTHER_VOCABULARIES: Readonly<Record<string, string>> = {
  custom: 'a zod issue code (`ctx.addIssue`)',
  invalid_type: 'a zod issue code',
  invalid_union: 'a zod issue code',
  too_big: 'a zod issue code',
  too_small: 'a zod issue code',
  unrecognized_keys: 'a zod issue code',
  landed: 'an answer of the Redis append script (src/storage/redis/scripts.ts)',
  replayed: 'an answer of the Redis append script',
  refused: 'an answer of the Redis append script',
  unreadable_record: 'a tail `Err` line (decisions row 67), not a problem',
};

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const CATALOGUED: ReadonlySet<string> = new Set(ERROR_CODE_NAMES);

/**
 * What a source file does that the catalog rule forbids: `file:line: what`. `errorClasses`
 * are the classes whose first argument is a code (`errorClasses()`).
 */
export function codeViolations(
  file: string,
  text: string,
  errorClasses: ReadonlySet<string>,
): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    found.push(`${file}:${line + 1}: ${what}`);
  };
  const literal = (node: ts.Node | undefined, where: string) => {
    if (node === undefined || !ts.isStringLiteralLike(node) || !SNAKE.test(node.text)) return;
    if (!CATALOGUED.has(node.text) && OTHER_VOCABULARIES[node.text] === undefined) {
      at(node, `${where} '${node.text}' is not in the catalog`);
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && node.name.getText(source) === 'code') {
      literal(node.initializer, 'code member');
    }
    if (ts.isBinaryExpression(node) && isEquality(node.operatorToken.kind)) {
      if (isCodeAccess(node.left)) literal(node.right, 'compared code');
      if (isCodeAccess(node.right)) literal(node.left, 'compared code');
    }
    if (ts.isNewExpression(node) && errorClasses.has(node.expression.getText(source))) {
      literal(node.arguments?.[0], `new ${node.expression.getText(source)}`);
    }
    if (
      (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) &&
      /\b(ErrorCode|CodeOf)\b/.test(node.type.getText(source)) &&
      file !== CATALOG
    ) {
      at(node, `casts to ${node.type.getText(source)}`);
    }
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ['code', 'status'].includes(node.expression.name.text) &&
      errorStatusLiteral(node.arguments[0]) &&
      file !== PROBLEM_MODULE
    ) {
      at(node, `sets status ${node.arguments[0]?.getText(source) ?? ''} outside the catalog`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isEquality(kind: ts.SyntaxKind): boolean {
  return [
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ].includes(kind);
}

/** `x.code` or `x?.code`. */
function isCodeAccess(node: ts.Node): boolean {
  return ts.isPropertyAccessExpression(node) && node.name.text === 'code';
}

/** A numeric literal of 400 or more. */
function errorStatusLiteral(node: ts.Node | undefined): boolean {
  return node !== undefined && ts.isNumericLiteral(node) && Number(node.text) >= 400;
}

/** Every source file of src, as a path from the root and its text. */
async function sourceFiles(): Promise<{ file: string; text: string }[]> {
  const entries = await readdir(SRC, { recursive: true });
  const files = entries.filter((entry) => entry.endsWith('.ts'));
  return Promise.all(
    files.map(async (entry) => ({
      file: path.relative(ROOT, path.join(SRC, entry)).split(path.sep).join('/'),
      text: await readFile(path.join(SRC, entry), 'utf8'),
    })),
  );
}

/** `ServiceError` and every class of src that extends it, however far down. */
function errorClasses(files: readonly { file: string; text: string }[]): Set<string> {
  const parents = new Map<string, string>();
  for (const { file, text } of files) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      const heritage = ts.isClassDeclaration(node)
        ? node.heritageClauses?.[0]?.types[0]
        : undefined;
      if (ts.isClassDeclaration(node) && node.name !== undefined && heritage !== undefined) {
        parents.set(node.name.text, heritage.expression.getText(source));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const classes = new Set(['ServiceError']);
  for (let grown = true; grown;) {
    grown = false;
    for (const [name, parent] of parents) {
      if (classes.has(parent) && !classes.has(name)) {
        classes.add(name);
        grown = true;
      }
    }
  }
  return classes;
}

describe('the catalog of error codes', () => {
  it('gives every code a status of the documented categories and a meaning', () => {
    const statuses = new Set([400, 401, 403, 404, 409, 413, 415, 429, 500, 502, 503]);
    for (const code of ERROR_CODE_NAMES) {
      expect(code).toMatch(SNAKE);
      expect(statuses).toContain(statusOf(code));
      expect(ERROR_CODES[code].meaning).toMatch(/^\S.*\.$/);
    }
  });

  it('names no other vocabulary among its codes', () => {
    for (const word of Object.keys(OTHER_VOCABULARIES)) expect(CATALOGUED.has(word)).toBe(false);
  });

  it('is the only source of the codes in src', async () => {
    const files = await sourceFiles();
    const classes = errorClasses(files);
    for (const name of ['InvalidRequest', 'Unavailable', 'EndpointRefused']) {
      expect(classes).toContain(name);
    }
    const found = files.flatMap(({ file, text }) => codeViolations(file, text, classes));
    expect(found).toEqual([]);
  });

  it('refuses a code outside the catalog, a cast to a code, and a status set by hand', () => {
    const text = [
      "throw new Conflict('made_up_conflict', 'no');",
      "const answer = { code: 'another_made_up' };",
      "if (error.code === 'third_made_up') return;",
      "const code = 'x' as ErrorCode;",
      'reply.code(409).send(answer);',
      "throw new Conflict('version_conflict', 'fine');",
      "ctx.addIssue({ code: 'custom', message: 'fine' });",
    ].join('\n');
    expect(codeViolations('src/example.ts', text, new Set(['Conflict']))).toEqual([
      "src/example.ts:1: new Conflict 'made_up_conflict' is not in the catalog",
      "src/example.ts:2: code member 'another_made_up' is not in the catalog",
      "src/example.ts:3: compared code 'third_made_up' is not in the catalog",
      'src/example.ts:4: casts to ErrorCode',
      'src/example.ts:5: sets status 409 outside the catalog',
    ]);
  });
});
