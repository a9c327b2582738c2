import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamFailure } from '../../src/errors.ts';
import { callTool } from '../../src/mcp/call.ts';
import { EndpointRefused } from '../../src/mcp/failures.ts';
import { Egress } from '../../src/net/egress.ts';
import { startEverything } from './peers/everything.ts';
import type { EverythingServer } from './peers/everything.ts';
import { freePort } from './peers/loopback.ts';
import { sampleTools, startPagingServer } from './peers/paging.ts';
import type { PagingServer } from './peers/paging.ts';
import { loopbackEgress } from '../support/egress.ts';

const egress = loopbackEgress();

let everything: EverythingServer;
let paging: PagingServer;
beforeAll(async () => {
  [everything, paging] = await Promise.all([
    startEverything(),
    startPagingServer(sampleTools(2), 10),
  ]);
});
afterAll(async () => {
  await Promise.all([everything.close(), paging.close()]);
});

const call = (name: string, args: Record<string, unknown>, timeoutMs = 5000) =>
  callTool({ endpoint: everything.endpoint, name, args, timeoutMs, egress });

describe('calling a tool of server-everything', () => {
  it('answers the tool result', async () => {
    const message = `hello ${Math.random()}`;
    expect(await call('echo', { message })).toEqual({
      content: [{ type: 'text', text: `Echo: ${message}` }],
    });
    expect((await call('get-sum', { a: 2, b: 40 })).content).toEqual([
      { type: 'text', text: expect.stringContaining('42') as unknown },
    ]);
  });

  it('answers structured content beside the text', async () => {
    const result = await call('get-structured-content', { location: 'Chicago' });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ temperature: expect.any(Number) as unknown });
  });

  it('answers an unknown tool as an isError result, not an exception', async () => {
    const result = await call('no-such-tool', {});
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      { type: 'text', text: expect.stringContaining('no-such-tool') as unknown },
    ]);
  });

  it('answers arguments that do not fit the schema as an isError result', async () => {
    const result = await call('get-sum', { a: 'two' });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('Input validation error');
  });

  it('times out a call that outlasts its deadline', async () => {
    const started = Date.now();
    await expect(
      call('trigger-long-running-operation', { duration: 5, steps: 5 }, 500),
    ).rejects.toMatchObject({
      code: 'upstream_timeout',
      status: 502,
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('calling a tool elsewhere', () => {
  it('answers a JSON-RPC refusal of the call as an isError result', async () => {
    // The paging peer serves no tools/call at all: the SDK's Server answers "method not found".
    const result = await callTool({
      endpoint: paging.endpoint,
      name: 'tool-00',
      args: { value: 1 },
      timeoutMs: 5000,
      egress,
    });
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text' }] });
  });

  it('fails as upstream when the server cannot be reached', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}/mcp`;
    const failure = callTool({ endpoint, name: 'echo', args: {}, timeoutMs: 5000, egress });
    await expect(failure).rejects.toBeInstanceOf(UpstreamFailure);
    await expect(failure).rejects.toMatchObject({ code: 'upstream_unreachable' });
  });
});

describe('calling through the egress guard', () => {
  it('fails as upstream_refused, an upstream failure the caller answers ok:false with', async () => {
    const failure = callTool({
      endpoint: everything.endpoint,
      name: 'echo',
      args: { message: 'hi' },
      timeoutMs: 5000,
      egress: new Egress(),
    });
    await expect(failure).rejects.toBeInstanceOf(EndpointRefused);
    await expect(failure).rejects.toBeInstanceOf(UpstreamFailure);
    await expect(failure).rejects.toMatchObject({
      code: 'upstream_refused',
      status: 502,
      refusal: 'is a loopback address',
      message: expect.stringContaining('EGRESS_ALLOW') as unknown,
    });
  });
});
