/**
 * The baseline of the idle row of `npm run bench`'s memory part (`http-memory.ts`): a
 * bare Fastify process, the least a Node HTTP service on the same framework holds
 * resident. One route, no logger, no stores; it listens on a loopback port, tells its
 * parent the port over IPC and waits to be killed. Started with the service's compile
 * cache preload (`src/compile-cache.js`), warm, it loads no TypeScript stripper, as the
 * service does not.
 */
import { flushCompileCache } from 'node:module';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/health', () => ({ status: 'ok' }));
await app.listen({ port: 0, host: '127.0.0.1' });
// Killed, not stopped: what it compiled is in the compile cache now for the next one.
flushCompileCache();
process.send?.({ port: (app.server.address() as AddressInfo).port });
