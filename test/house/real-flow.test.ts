/**
 * Tests reach state the way users do: through the HTTP API, never by
 * writing installs, connections, consents or session records straight into a store. Only
 * the storage conformance suite (test/contracts, test/storage) calls the stores' write
 * verbs or imports the modules that open stores; the test app (test/support/app.ts) opens
 * the stores the service under test runs on, and nothing else.
 *
 * The write verbs are read from the ports themselves (src/storage/*-store.ts): every
 * method of `ControlStore`, `LogStore` and `WorkStore` is a write unless it is named in
 * `READS` below, so a verb added to a port is held to the rule without editing this file.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TEST = path.join(ROOT, 'test');
const STORAGE = path.join(ROOT, 'src/storage');

/** Where store writes belong: the conformance suite of the stores. */
const CONFORMANCE = ['test/contracts/', 'test/storage/'];
/** The harness: it opens the stores the app under test runs on (and writes nothing). */
const HARNESS = 'test/support/app.ts';

/** The ports' verbs that change nothing. */
const READS = new Set([
  'backend',
  'get',
  'list',
  'findByIndex',
  'readSecretValue',
  'loadSnapshot',
  'readUsage',
  'read',
  'tail',
  'head',
  'readByKey',
  'dueEntry',
  'due',
  'countedThrough',
  'turnState',
  'ping',
  'close',
]);

/** Write verbs whose names other objects use too: a call counts when its receiver is a store. */
const SHARED_NAMES = new Set(['write', 'append', 'archive']);
const STORE_RECEIVER = /\b(stores?|control|log|work)\b|Store\b/;

/** Values of src/storage a test may import: constants that open and write nothing. */
const HARMLESS_IMPORTS = new Set(['SQLITE_FILE', 'keyId']);

const PORTS: Record<string, string> = {
  'control-store.ts': 'ControlStore',
  'log-store.ts': 'LogStore',
  'work-store.ts': 'WorkStore',
};

/** Every write verb of the three ports. */
export async function writeVerbs(): Promise<Set<string>> {
  const verbs = new Set<string>();
  for (const [file, name] of Object.entries(PORTS)) {
    const source = ts.createSourceFile(
      file,
      await readFile(path.join(STORAGE, file), 'utf8'),
      ts.ScriptTarget.Latest,
    );
    for (const statement of source.statements) {
      if (!ts.isInterfaceDeclaration(statement) || statement.name.text !== name) continue;
      for (const member of statement.members) {
        const verb = member.name !== undefined && ts.isIdentifier(member.name) && member.name.text;
        if (verb !== false && !READS.has(verb)) verbs.add(verb);
      }
    }
  }
  return verbs;
}

/** What a file does that the rule forbids: `line: what`. */
export function violations(file: string, text: string, verbs: ReadonlySet<string>): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart());
    found.push(`${path.relative(ROOT, file)}:${line + 1}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const target = path.resolve(path.dirname(file), node.moduleSpecifier.text);
      const clause = node.importClause;
      if (
        target.startsWith(`${STORAGE}${path.sep}`) &&
        clause !== undefined &&
        clause.phaseModifier !== ts.SyntaxKind.TypeKeyword
      ) {
        const names = valueImports(clause).filter((name) => !HARMLESS_IMPORTS.has(name));
        if (names.length > 0) at(node, `imports ${names.join(', ')} from src/storage`);
      }
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const verb = node.expression.name.text;
      const receiver = node.expression.expression.getText(source);
      const store = !SHARED_NAMES.has(verb) || STORE_RECEIVER.test(receiver);
      if (verbs.has(verb) && store) at(node, `calls ${receiver}.${verb}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The value bindings of an import clause (type-only specifiers left out). */
function valueImports(clause: ts.ImportClause): string[] {
  const names = clause.name === undefined ? [] : [clause.name.text];
  const bindings = clause.namedBindings;
  if (bindings !== undefined && ts.isNamespaceImport(bindings)) names.push(bindings.name.text);
  if (bindings !== undefined && ts.isNamedImports(bindings)) {
    for (const element of bindings.elements) if (!element.isTypeOnly) names.push(element.name.text);
  }
  return names;
}

async function testFiles(): Promise<string[]> {
  const entries = await readdir(TEST, { recursive: true });
  return entries
    .filter((entry) => /\.(m?ts|tsx)$/.test(entry))
    .map((entry) => path.join(TEST, entry))
    .filter((file) => {
      const relative = path.relative(ROOT, file).split(path.sep).join('/');
      return relative !== HARNESS && !CONFORMANCE.some((dir) => relative.startsWith(dir));
    });
}

describe('tests reach state through the public flow', () => {
  it('finds the write verbs on the ports', async () => {
    const verbs = await writeVerbs();
    for (const verb of ['write', 'putSecretValue', 'saveSnapshot', 'addUsage', 'append']) {
      expect(verbs).toContain(verb);
    }
    for (const verb of ['archive', 'markDue', 'settleDue', 'saveTurnState', 'checkpointUsage']) {
      expect(verbs).toContain(verb);
    }
    expect(verbs).not.toContain('get');
    expect(verbs).not.toContain('read');
  });

  it('catches a store write, a store opener and nothing a client does', async () => {
    const verbs = await writeVerbs();
    const file = path.join(TEST, 'support/sample.ts');
    // What test/support/install.ts did before this rule: an install put straight in.
    const old = [
      "import type { Versioned } from '../../src/storage/control-store.ts';",
      "import { openStores } from '../../src/storage/open.ts';",
      "import { SQLITE_FILE } from '../../src/storage/sql/open.ts';",
      'await harness.stores.control.write([{ op: "put", kind: "install" }]);',
      'await harness.deps.logStore.append(batch);',
      'await store.saveSnapshot("proposal", id, {}, 0);',
      'await client.archive(key, opened);',
      'process.stdout.write("x");',
      'await harness.stores.log.read(id, { from: 1 });',
    ].join('\n');
    expect(violations(file, old, verbs)).toEqual([
      'test/support/sample.ts:2: imports openStores from src/storage',
      'test/support/sample.ts:4: calls harness.stores.control.write',
      'test/support/sample.ts:5: calls harness.deps.logStore.append',
      'test/support/sample.ts:6: calls store.saveSnapshot',
    ]);
  });

  it('holds every test file outside the conformance suite to it', async () => {
    const verbs = await writeVerbs();
    const files = await testFiles();
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) found.push(...violations(file, await readFile(file, 'utf8'), verbs));
    expect(found).toEqual([]);
  });
});
