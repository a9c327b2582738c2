/**
 * `npm run client:types` writes `packages/client/src/openapi.ts` from the document the
 * service serves; `npm run client:types:check` (`--check`) writes nothing and exits
 * non-zero when the committed file is stale.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLIENT_TYPES_FILE, renderClientTypes, staleClientTypes } from './client-types/generate.ts';
import { servedDocument } from './client-types/served-document.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const document = await servedDocument();

if (process.argv.includes('--check')) {
  if (await staleClientTypes(document, root)) {
    console.error(`Stale client types (run npm run client:types): ${CLIENT_TYPES_FILE}`);
    process.exit(1);
  }
  console.log('Client types are up to date.');
} else {
  await writeFile(path.join(root, CLIENT_TYPES_FILE), await renderClientTypes(document, root));
  console.log(`wrote ${CLIENT_TYPES_FILE}`);
}
