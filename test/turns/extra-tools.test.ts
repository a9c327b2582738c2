/**
 * Extra tools (decisions row 89): a tenant links a real MCP server (server-everything on
 * loopback, allowed through the egress guard by the test app's EGRESS_ALLOW), consents to
 * its `echo` as an extra tool, and the service calls it itself as `service:mcp` when the
 * model asks. With the server stopped the call completes `ok: false` and the turn still
 * ends. Usage counts the calls under the model-visible name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverything, type EverythingServer } from '../mcp/peers/everything.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import type { TurnClient } from './turn-client.ts';
import { listeningClient, type TailRecord } from './turn-client.ts';

const ofKind = (records: readonly TailRecord[], name: string): TailRecord[] =>
  records.filter((r) => r.envelope.kind.name === name);

describe('extra tools of a linked MCP server', () => {
  let harness: TestApp;
  let client: TurnClient;
  let server: EverythingServer;

  beforeAll(async () => {
    server = await startEverything();
    harness = await startTestApp();
    client = await listeningClient(harness);
  }, 30_000);
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  it('calls the tool over MCP, gives the model its result, and survives the server going away', async () => {
    const owner = await client.owner();
    const linked = await client.call('PUT', '/connections/everything', owner.token, {
      name: 'everything',
      endpoint: server.endpoint,
      timeout: '5s',
    });
    expect(linked.status, JSON.stringify(linked.body)).toBeLessThan(300);
    const { key } = await client.install({}, owner, {
      extra_tools: [{ connection: 'everything', tool: 'echo' }],
    });
    const opened = await client.open(key);
    await client.send(opened, '/call everything__echo {"message":"hello from the model"}');
    let records = await client.turnsEnded(opened, 1, 15_000);
    const [completed] = ofKind(records, 'invoke.completed');
    expect(completed?.envelope.producer).toBe('service:mcp');
    expect(completed?.body).toMatchObject({
      ok: true,
      error: null,
      result: { sealed: { size: expect.any(Number) as number } },
    });
    expect(ofKind(records, 'model.output')[1]?.body.text).toEqual(
      expect.stringContaining('hello from the model'),
    );
    expect(ofKind(records, 'turn.ended')[0]?.body.reason).toBe('completed');

    await server.close();
    await client.send(opened, '/call everything__echo {"message":"anyone there?"}');
    records = await client.turnsEnded(opened, 2, 15_000);
    const failed = ofKind(records, 'invoke.completed')[1];
    expect(failed?.body).toMatchObject({ ok: false, result: null });
    expect(failed?.body.error).toEqual(expect.any(String));
    expect(ofKind(records, 'turn.ended')[1]?.body.reason).toBe('completed');

    await client.archive(key, opened);
    const audit = await client.audit(owner, opened);
    expect(ofKind(audit, 'invoke.completed')[0]?.body.result).toMatchObject({
      content: [{ type: 'text', text: expect.stringContaining('hello from the model') as string }],
    });
    const allowed = ofKind(audit, 'invoke.allowed');
    expect(allowed.map((r) => r.envelope.to)).toEqual([
      'connection:everything',
      'connection:everything',
    ]);
    // Row 52: usage counts the calls under the model-visible name once the archive is counted.
    const row = await client.usageWhen(owner, (r) => (r.events as number) >= audit.length);
    expect(row?.tool_calls).toEqual({ everything__echo: 2 });
  }, 60_000);
});
