/**
 * An executor a vendor can copy (see README.md): it performs the vendor tool calls of one
 * session. Settings come from the command line or the environment, read once here:
 *
 *   node examples/executor/main.ts --session <id> --name <name> --key <pkcs8.pem> \
 *     [--base-url <BASE_URL>] [--service-url <url>] [--state <file>]
 *
 * Each flag has an environment variable: SESSION_ID, EXECUTOR_NAME, EXECUTOR_KEY,
 * BASE_URL, SERVICE_URL, EXECUTOR_STATE. EXECUTOR_EXIT_AFTER_CLAIM=1 is a test hook.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { importPKCS8 } from 'jose';
import { runExecutor } from './executor.ts';
import type { Settings } from './service.ts';

// The one place this example reads its environment, like the service's src/main.ts.
// eslint-disable-next-line no-restricted-properties
const env = process.env;

const { values } = parseArgs({
  options: {
    'service-url': { type: 'string', default: env.SERVICE_URL },
    'base-url': { type: 'string', default: env.BASE_URL ?? 'http://127.0.0.1:8080' },
    session: { type: 'string', default: env.SESSION_ID },
    name: { type: 'string', default: env.EXECUTOR_NAME },
    key: { type: 'string', default: env.EXECUTOR_KEY },
    state: { type: 'string', default: env.EXECUTOR_STATE ?? 'executor-state.json' },
  },
});

function required(value: string | undefined, flag: string, variable: string): string {
  if (value === undefined || value === '') {
    throw new Error(`--${flag} (or ${variable}) is required`);
  }
  return value;
}

const log = (event: string, fields: Record<string, unknown>): void => {
  console.log(JSON.stringify({ event, ...fields }));
};

const stop = new AbortController();
process.once('SIGINT', () => {
  stop.abort();
});
process.once('SIGTERM', () => {
  stop.abort();
});

try {
  const baseUrl = values['base-url'].replace(/\/+$/, '');
  const settings: Settings = {
    baseUrl,
    serviceUrl: values['service-url'] ?? baseUrl,
    session: required(values.session, 'session', 'SESSION_ID'),
    name: required(values.name, 'name', 'EXECUTOR_NAME'),
  };
  const pem = await readFile(required(values.key, 'key', 'EXECUTOR_KEY'), 'utf8');
  await runExecutor({
    settings,
    key: await importPKCS8(pem, 'EdDSA'),
    statePath: values.state,
    log,
    signal: stop.signal,
    // Test hook: die like `kill -9` right after the first claim lands, before completing.
    ...(env.EXECUTOR_EXIT_AFTER_CLAIM === '1'
      ? { afterClaim: () => process.kill(process.pid, 'SIGKILL') }
      : {}),
  });
} catch (error) {
  log('failed', { error: String(error) });
  process.exitCode = 1;
}
