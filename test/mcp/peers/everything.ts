/**
 * The reference MCP server `@modelcontextprotocol/server-everything`, run as a child
 * process in Streamable HTTP mode on a free loopback port (notes §2.1). It runs on the
 * same Node as the tests (`process.execPath`, Node 24), answers at `/mcp`, and is killed
 * on `close`.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { freePort } from './loopback.ts';

/** A running server-everything. */
export interface EverythingServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly endpoint: string;
  close(): Promise<void>;
}

const STARTUP_MS = 15_000;

/** The server's entry point, resolved through its package so a layout change fails loudly. */
function entryPoint(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json');
  return path.join(path.dirname(manifest), 'dist', 'index.js');
}

/** Starts server-everything and waits until its endpoint answers HTTP. */
export async function startEverything(): Promise<EverythingServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [entryPoint(), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };

  const endpoint = `http://127.0.0.1:${port}/mcp`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`server-everything exited with ${child.exitCode}: ${output}`);
    }
    try {
      // Any HTTP answer (a 400 or 405 to a bare GET) means it listens.
      const response = await fetch(endpoint, { signal: AbortSignal.timeout(1000) });
      await response.body?.cancel();
      return { endpoint, close };
    } catch {
      if (Date.now() - started > STARTUP_MS) {
        await close();
        throw new Error(
          `server-everything did not answer on port ${port} within ${STARTUP_MS} ms: ${output}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
