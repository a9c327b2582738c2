/**
 * Preloaded by `npm start` (`--import`, before `src/main.ts`): turns on Node's module
 * compile cache, so that a service started again from the same files takes each module's
 * type-stripped text and V8's compiled code from disk.
 *
 * Memory more than start-up time: Node strips the types of a `.ts` module with swc built to
 * WebAssembly, which, once loaded, holds some 18 MB for the life of the process
 * (`docs/benchmarks.md`, "Idle"). With every module found in the cache, Node never loads
 * it. The first start after an install or a change of the sources fills the cache and
 * pays for it until it stops; the typed client the pages import is stripped by a child
 * process (`src/http/client-assets.ts`), so the service never needs the stripper itself.
 *
 * The cache is kept in `node_modules/.cache` of the service's own folder, owned by whoever
 * installed it, rather than in the shared temporary folder Node picks by default, where
 * another user could plant compiled code. `NODE_COMPILE_CACHE` names another folder and
 * `NODE_DISABLE_COMPILE_CACHE=1` turns the cache off (both read by Node itself). When the
 * folder cannot be written, the service starts as it would without the cache.
 */
import { enableCompileCache } from 'node:module';
import { fileURLToPath, URL } from 'node:url';

enableCompileCache(
  fileURLToPath(new URL('../node_modules/.cache/agent-session-service/', import.meta.url)),
);
