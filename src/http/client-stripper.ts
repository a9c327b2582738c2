/**
 * Run as a child process by `client-assets.ts`: reads each TypeScript file named on its
 * command line, strips its types (`stripTypeScriptTypes`: types become whitespace, so lines
 * and columns stay those of the source) and writes the JavaScript texts to stdout as one
 * JSON array, in the order given.
 *
 * A child rather than the service, because the stripper (swc, built to WebAssembly) holds
 * some 18 MB for the life of the process that loads it, and the service itself, started
 * with its compile cache warm (`src/compile-cache.js`), never loads it. A file of syntax
 * that is not erasable (an enum, a namespace) fails the child, which says so on stderr.
 */
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';

const texts = process.argv.slice(2).map((file) => stripTypeScriptTypes(readFileSync(file, 'utf8')));
process.stdout.write(JSON.stringify(texts));
