/**
 * OpenTelemetry traces of a request through the store. The service runs as users run it
 * (`node src/main.ts`) with `OTEL_EXPORTER_OTLP_ENDPOINT` naming a small OTLP/HTTP
 * receiver on loopback (the exporter sends JSON); a caller appends with a W3C
 * `traceparent`; after SIGTERM the receiver holds the request's server span, continuing
 * the caller's trace, with the store spans under it, and no credential anywhere in what
 * was exported. Without the setting the process loads no SDK module at all.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_TELEMETRY, startTelemetry } from '../../src/telemetry/start.ts';
import { fetched, PublicFlow } from '../support/flow.ts';
import { TurnClient } from '../turns/turn-client.ts';
import { startService, type ServiceProcess } from '../support/service-process.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';

const HOOK = path.resolve(import.meta.dirname, '../support/otel-loads.ts');
const OPERATOR_TOKEN = randomBytes(32).toString('base64url');
/** The SDK's packages: none may load while tracing is off. */
const SDK = [
  '@opentelemetry/sdk-trace',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/resources',
];

/** Where the stores live, and the `db.system.name` of the log and control stores there. */
const DEPLOYMENTS: readonly {
  name: string;
  env: Record<string, string>;
  log: string;
  control: string;
}[] = [
  { name: 'embedded', env: {}, log: 'sqlite', control: 'sqlite' },
  {
    name: 'PostgreSQL and Redis',
    env: { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL },
    log: 'redis',
    control: 'postgresql',
  },
];

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

interface KeyValue {
  readonly key: string;
  readonly value: { stringValue?: string; intValue?: number | string };
}
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: readonly KeyValue[];
  readonly status?: { code?: number };
}
interface OtlpBody {
  readonly resourceSpans: readonly {
    readonly resource: { readonly attributes: readonly KeyValue[] };
    readonly scopeSpans: readonly { readonly spans: readonly OtlpSpan[] }[];
  }[];
}

const SERVER = 2;
const CLIENT = 3;

/** An OTLP/HTTP receiver on loopback that keeps the bodies POSTed to `/v1/traces`. */
async function receiver() {
  const bodies: string[] = [];
  const types: string[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        bodies.push(body);
        types.push(request.headers['content-type'] ?? '');
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    types,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  };
}

const attribute = (span: { attributes: readonly KeyValue[] }, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

/** The OTEL modules a service reported loading (`support/otel-loads.ts`). */
const loaded = (service: ServiceProcess) =>
  [...service.stderr().matchAll(/^otel-module (\S+)$/gm)].map((m) => m[1]);

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'traces-'));
  dirs.push(dir);
  return dir;
}

describe('OpenTelemetry traces', () => {
  it.each(DEPLOYMENTS)(
    'export an append as a server span with store spans under it, in the caller’s trace ($name)',
    async ({ env, log, control }) => {
      const collector = await receiver();
      const service = await startService(
        {
          OPERATOR_TOKEN,
          DATA_DIR: await dataDir(),
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          OTEL_SERVICE_NAME: 'traces-test',
          ...env,
        },
        20_000,
        ['--import', HOOK],
      );
      const secrets: string[] = [OPERATOR_TOKEN];
      const traceId = randomBytes(16).toString('hex');
      const parentId = randomBytes(8).toString('hex');
      try {
        const client = new TurnClient(service.url, OPERATOR_TOKEN);
        const install = await client.flow.install();
        const opened = await client.open(install.key);
        secrets.push(install.key, install.owner.token, opened.token);
        const answer = await client.call(
          'POST',
          `/sessions/${opened.session}/events`,
          opened.token,
          [{ kind: { name: 'message.submitted', version: 1 }, body: { text: 'hello' } }],
          { traceparent: `00-${traceId}-${parentId}-01`, 'idempotency-key': randomUUID() },
        );
        expect(answer.status).toBe(200);
        // The turn the message started runs its inference step; the log is read by tail.
        await client.turnsEnded(opened, 1);
        // And once over WebSocket, to its end at cursor 2.
        const ws = new WebSocket(
          `${service.url.replace('http:', 'ws:')}/sessions/${opened.session}/events?from=1&to=3&access_token=${opened.token}`,
        );
        await new Promise((resolve) => {
          ws.onclose = resolve;
        });
      } finally {
        await service.stop();
        await collector.close();
      }
      expect(await service.exit).toBe(0);
      // The exporter speaks OTLP/JSON; the last batch was flushed on SIGTERM.
      expect(collector.types.every((type) => type.startsWith('application/json'))).toBe(true);
      const bodies = collector.bodies.map((text) => JSON.parse(text) as OtlpBody);
      const resources = bodies.flatMap((b) => b.resourceSpans);
      expect(resources.length).toBeGreaterThan(0);
      for (const r of resources) expect(attribute(r.resource, 'service.name')).toBe('traces-test');
      const spans = resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));

      const server = spans.filter((s) => s.traceId === traceId && s.kind === SERVER);
      expect(server.map((s) => s.name)).toEqual(['POST /sessions/:id/events']);
      const [request] = server;
      if (request === undefined) throw new Error('no server span in the caller’s trace');
      expect(request.parentSpanId).toBe(parentId);
      expect(attribute(request, 'http.route')).toBe('/sessions/:id/events');
      expect(attribute(request, 'http.request.method')).toBe('POST');
      expect(attribute(request, 'http.response.status_code')).toBe(200);

      const children = spans.filter((s) => s.parentSpanId === request.spanId);
      expect(children.every((s) => s.traceId === traceId && s.kind === CLIENT)).toBe(true);
      const append = children.find((s) => s.name === 'log.append');
      if (append === undefined) throw new Error('no log.append span under the request');
      expect(attribute(append, 'db.system.name')).toBe(log);
      expect(attribute(append, 'db.operation.name')).toBe('append');
      expect(attribute(append, 'agent_sessions.append.outcome')).toBe('landed');
      const lookups = children.filter((s) => s.name.startsWith('control.'));
      expect(lookups.length).toBeGreaterThan(0);
      for (const lookup of lookups) expect(attribute(lookup, 'db.system.name')).toBe(control);

      // The turn's driver is no part of the request's trace: its inference step is a trace
      // of its own.
      expect(children.map((s) => s.name)).not.toContain('log.tail');
      const inference = spans.filter((s) => s.name === 'inference.infer');
      expect(inference.length).toBeGreaterThan(0);
      for (const step of inference) {
        expect(step.traceId).not.toBe(traceId);
        expect(step.parentSpanId ?? '').toBe('');
        expect(attribute(step, 'gen_ai.provider.name')).toBe('simulated');
        expect(attribute(step, 'gen_ai.usage.output_tokens')).toBeGreaterThan(0);
      }

      // A tail read, over HTTP or WebSocket, is a server span with the tail's span under it.
      const tails = spans.filter((s) => s.name === 'GET /sessions/:id/events');
      expect(tails.length).toBeGreaterThan(0);
      const tailed = spans.filter(
        (s) => s.name === 'log.tail' && tails.some((t) => t.spanId === s.parentSpanId),
      );
      expect(tailed.length).toBe(tails.length);
      expect(tails.map((s) => attribute(s, 'http.response.status_code'))).toContain(101);
      expect(tailed.every((s) => Number(attribute(s, 'agent_sessions.records')) > 0)).toBe(true);

      // Other requests made spans too, and none of what was exported holds a credential.
      expect(spans.some((s) => s.name === 'POST /consent/token')).toBe(true);
      expect(secrets).toHaveLength(4);
      for (const text of collector.bodies) {
        for (const secret of secrets) expect(text).not.toContain(secret);
      }
      expect(loaded(service)).toEqual(expect.arrayContaining(SDK));
    },
    60_000,
  );

  it('load no SDK module without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    expect(
      await startTelemetry(undefined, () => {
        throw new Error('nothing to warn about');
      }),
    ).toBe(NO_TELEMETRY);
    const service = await startService({ OPERATOR_TOKEN, DATA_DIR: await dataDir() }, 20_000, [
      '--import',
      HOOK,
    ]);
    try {
      const flow = new PublicFlow(fetched(service.url), OPERATOR_TOKEN);
      await flow.owner();
    } finally {
      await service.stop();
    }
    // The hook reports what loads (the API, which is a no-op without the SDK) …
    expect(loaded(service)).toContain('@opentelemetry/api');
    // … and nothing of the SDK did.
    expect(loaded(service).filter((name) => SDK.includes(name ?? ''))).toEqual([]);
  }, 30_000);
});
