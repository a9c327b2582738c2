/**
 * Two service processes on one Redis enforce one limit: `node
 * src/main.ts` twice, as a deployment runs it, with REDIS_URL and one BASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from '../support/service-process.ts';
import { TEST_REDIS_URL } from '../support/services.ts';
import { vendorDocument } from '../turns/turn-client.ts';
import { countStatuses, LoopbackClient, randomLoopback } from './loopback-client.ts';

const running: ServiceProcess[] = [];
const folders: string[] = [];

afterAll(async () => {
  await Promise.all(running.map((service) => service.stop()));
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-rate-'));
  folders.push(dataDir);
  const service = await startService({ ...env, DATA_DIR: dataDir });
  running.push(service);
  return service;
}

describe('rate limits across processes', () => {
  it('lets two processes on one Redis allow one limit between them', async () => {
    // One deployment is one BASE_URL: its processes share the counts under it.
    const env = {
      REDIS_URL: TEST_REDIS_URL,
      BASE_URL: `http://rate-${randomUUID().slice(0, 8)}.example`,
      APPDOC_RATE_LIMIT_PER_MINUTE: '6',
    };
    const [first, second] = await Promise.all([start(env), start(env)]);
    const address = randomLoopback();
    const clients = [
      new LoopbackClient(first.url, address),
      new LoopbackClient(second.url, address),
    ];
    // Twelve proposals from one address, every other one to each process.
    const answers = [];
    for (let i = 0; i < 12; i += 1) {
      const client = clients[i % 2];
      if (client === undefined) throw new Error('no client');
      answers.push(await client.request('POST', '/appdoc', { body: vendorDocument() }));
    }
    clients.forEach((client) => {
      client.close();
    });
    // Counted per process, each would have allowed six: twelve 201s.
    expect(countStatuses(answers)).toEqual({ 201: 6, 429: 6 });
    expect(answers.map((answer) => answer.status)).toEqual([
      ...Array<number>(6).fill(201),
      ...Array<number>(6).fill(429),
    ]);
    expect(answers.find((answer) => answer.status === 429)?.body).toMatchObject({
      code: 'rate_limited',
      status: 429,
    });
  });
});
