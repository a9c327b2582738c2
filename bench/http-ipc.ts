/**
 * The bench server (`http-server.ts`) as `bench/http.ts` drives it: forked with the Node
 * flags the run asks for, waited on until it is ready, asked over IPC for its CPU time,
 * its probe windows and its stage timings, and stopped.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { START_FLAGS } from '../test/support/start-flags.ts';
import { once } from 'node:events';
import type { ServerAnswer, ServerReady } from './http-server.ts';

type Kind = ServerAnswer['type'];

export class BenchServer {
  readonly ready: ServerReady;
  readonly #child: ChildProcess;
  /** Callers waiting for an answer of each type, first asked first answered. */
  readonly #waiting = new Map<Kind, ((answer: ServerAnswer) => void)[]>();

  private constructor(child: ChildProcess, ready: ServerReady) {
    this.#child = child;
    this.ready = ready;
    child.on('message', (message: ServerAnswer) => {
      this.#waiting.get(message.type)?.shift()?.(message);
    });
  }

  /** Forks the server with `execArgv` and resolves once it listens. */
  static async start(execArgv: readonly string[]): Promise<BenchServer> {
    const child = fork(new URL('./http-server.ts', import.meta.url), [], {
      // As `npm start` runs the service (its engine flags), then the bench's own.
      execArgv: [...START_FLAGS, ...execArgv],
    });
    const [ready] = (await Promise.race([
      once(child, 'message'),
      once(child, 'exit').then(() => {
        throw new Error('the bench server exited before it was ready');
      }),
    ])) as [ServerReady];
    return new BenchServer(child, ready);
  }

  /** Sends a request of `type`; resolves with the server's answer of that type. */
  ask<T extends Kind>(type: T): Promise<Extract<ServerAnswer, { type: T }>> {
    return new Promise((resolve) => {
      const queue = this.#waiting.get(type) ?? [];
      this.#waiting.set(type, queue);
      queue.push(resolve as (answer: ServerAnswer) => void);
      this.#child.send({ type });
    });
  }

  /** Asks the server to clean up and exit; resolves once it has. */
  async stop(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = once(this.#child, 'exit');
    this.#child.send({ type: 'stop' });
    await exited;
  }
}
