/**
 * The service as its users run it: `node src/main.ts` in a child process on a free
 * loopback port, with the environment a test gives, waited on until `/health` answers,
 * and stopped with SIGTERM or killed with SIGKILL (kill -9) to test what a crash keeps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { START_FLAGS } from './start-flags.ts';

const MAIN = path.resolve(import.meta.dirname, '../../src/main.ts');

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
  });
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exit: Promise<number | null>;
  /** kill -9: no shutdown, no flush. */
  kill(): Promise<void>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts the service with `env` on a free port; resolves once `/health` answers 200.
 * `nodeArgs` go to Node before the entry point (e.g. `--import` of a hook).
 */
export async function startService(
  env: Record<string, string>,
  timeoutMs = 20_000,
  nodeArgs: readonly string[] = [],
): Promise<ServiceProcess> {
  const port = await freePort();
  const args = [...START_FLAGS, ...nodeArgs, MAIN];
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited at start: ${stderr}`);
    try {
      if ((await fetch(`${url}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`the service did not answer within ${timeoutMs} ms: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    url,
    stderr: () => stderr,
    exit,
    kill: async () => {
      child.kill('SIGKILL');
      await exit;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exit;
    },
  };
}
