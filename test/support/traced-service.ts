/**
 * The service started as `npm start` starts it with one more preload (`--import`) that
 * writes what it traced to the file named by the environment variable `traceVariable`
 * (`package-trace.ts`, `stripper-trace.js`), in a data folder of its own.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startService, type ServiceProcess } from './service-process.ts';

export interface Trace {
  /** The preload's file. */
  readonly preload: string;
  /** The environment variable the preload reads its file's name from. */
  readonly variable: string;
}

/**
 * Starts the service with `trace` preloaded and `env`, runs `use` on it, stops it, and
 * answers what the preload wrote (read after the stop: a preload may write at exit).
 */
export async function tracedRun(
  trace: Trace,
  env: Record<string, string>,
  use: (service: ServiceProcess) => Promise<void> = () => Promise.resolve(),
): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'traced-service-'));
  try {
    const file = path.join(dir, 'trace.txt');
    const service = await startService(
      { DATA_DIR: path.join(dir, 'data'), [trace.variable]: file, ...env },
      20_000,
      [`--import=${trace.preload}`],
    );
    try {
      await use(service);
    } finally {
      await service.stop();
    }
    return await readFile(file, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
