/**
 * An executor a vendor can copy (see README.md): it performs the vendor tool calls of one
 * session with the client package's executor helper. Settings come from the command line
 * or the environment, read once here:
 *
 *   node examples/executor/main.ts --session <id> --name <name> --key <pkcs8.pem> \
 *     [--base-url <BASE_URL>] [--service-url <url>] [--state <file>]
 *
 * Each flag has an environment variable: SESSION_ID, EXECUTOR_NAME, EXECUTOR_KEY,
 * BASE_URL, SERVICE_URL, EXECUTOR_STATE. EXECUTOR_EXIT_AFTER_CLAIM=1 is a test hook.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createClient, runExecutor } from '@agent-session-service/client';
import { loadCursor, saveCursor } from './state.ts';
import { perform } from './tools.ts';

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

/** The Ed25519 private key of a PKCS#8 PEM file, for Web Crypto. */
async function privateKey(file: string) {
  const pem = await readFile(file, 'utf8');
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return crypto.subtle.importKey('pkcs8', der, 'Ed25519', false, ['sign']);
}

const stop = new AbortController();
process.once('SIGINT', () => {
  stop.abort();
});
process.once('SIGTERM', () => {
  stop.abort();
});

try {
  const baseUrl = values['base-url'].replace(/\/+$/, '');
  const session = required(values.session, 'session', 'SESSION_ID');
  const statePath = values.state;
  const from = await loadCursor(statePath, session);
  log('started', { session, from });
  const ended = await runExecutor(createClient({ baseUrl: values['service-url'] ?? baseUrl }), {
    session,
    name: required(values.name, 'name', 'EXECUTOR_NAME'),
    key: await privateKey(required(values.key, 'key', 'EXECUTOR_KEY')),
    // Row 65: the assertion's audience is the token endpoint under BASE_URL.
    audienceBase: baseUrl,
    from,
    // Step 6: the cursor moves past a call only once the call needs nothing more.
    onCursor: (next) => saveCursor(statePath, session, next),
    handle: (call) => perform(call.tool, call.args),
    onEvent: log,
    signal: stop.signal,
    // Test hook: die like `kill -9` right after the first claim lands, before completing.
    ...(env.EXECUTOR_EXIT_AFTER_CLAIM === '1'
      ? {
          afterClaim: () => {
            process.kill(process.pid, 'SIGKILL');
          },
        }
      : {}),
  });
  log('stopped', { ended });
} catch (error) {
  log('failed', { error: String(error) });
  process.exitCode = 1;
}
