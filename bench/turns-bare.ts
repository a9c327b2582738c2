/**
 * The baseline server of `npm run bench:turns`, in a child process of its own as the
 * service is: the bare append route of `npm run bench` (`http-bare.ts`: Fastify, one Lua
 * call per request that mints the cursor and XADDs the record, nothing else) on the same
 * Redis, under a fresh key prefix.
 *
 * Tells the parent `{ type: 'ready', port }` over IPC once it listens; on `{ type: 'stop' }`
 * (or when the parent goes) closes, drops every key under its prefix and exits.
 */
import { randomBytes } from 'node:crypto';
import { dropKeys, startBareServer, type BareServer } from './http-bare.ts';

/** What the parent hears once the route listens. */
export interface BareReady {
  readonly type: 'ready';
  readonly port: number;
}

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `bench:turns:${randomBytes(4).toString('hex')}:`;

let server: BareServer | undefined;
let stopping = false;

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    await server?.close();
    await dropKeys(REDIS_URL, prefix);
  } catch (error) {
    process.stderr.write(`bare server cleanup: ${String(error)}\n`);
    process.exitCode = 1;
  }
  if (process.connected) process.disconnect();
}

process.on('message', (message: { type?: string }) => {
  if (message.type === 'stop') void stop();
});
process.on('disconnect', () => void stop());
// Ctrl-C reaches the whole process group: clean up rather than die with the keys left.
process.on('SIGINT', () => void stop());

try {
  server = await startBareServer(REDIS_URL, prefix);
  const ready: BareReady = { type: 'ready', port: server.port };
  process.send?.(ready);
} catch (error) {
  process.stderr.write(
    `bare server failed: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exitCode = 1;
  await stop();
}
