/**
 * A build without the provider of a session's inference option (a log-only deployment)
 * takes the session's messages and runs no turn. Its first driver finds no usable option
 * and leaves the session alone for a minute: the messages sent meanwhile, however many,
 * start no driver, and the sweep does not take the session up again until that minute is
 * over. The service's warning, said once per look, shows each look; every call goes over
 * HTTP, and the service's clock is moved past the minute here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_ONLY, startTestApp, type TestApp } from '../support/app.ts';
import { ShiftedClock } from '../support/shifted-clock.ts';
import { listeningClient, type TurnClient } from './turn-client.ts';

const NO_OPTION = 'the session has no usable inference option; retrying in a minute';
/** Past the minute a session without a usable option is left alone. */
const PAST_RETRY_MS = 61_000;
/** Sweeps of the test app (every 200 ms) while the messages arrive. */
const SENDING_MS = 1_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a session whose inference option this build cannot run', () => {
  const clock = new ShiftedClock();
  let harness: TestApp;
  let client: TurnClient;

  beforeAll(async () => {
    harness = await startTestApp({ ...LOG_ONLY, clock });
    client = await listeningClient(harness);
  });
  afterAll(async () => {
    await harness.close();
  });

  const looks = (session: string): number =>
    harness.logs.lines().filter((line) => line.msg === NO_OPTION && line.session === session)
      .length;

  async function lookedAt(session: string, times: number): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (looks(session) < times && Date.now() < deadline) await sleep(20);
    expect(looks(session)).toBe(times);
  }

  it('is not looked at for a batch the append refuses: a refusal marks no session due', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    // A message with no text: its body is refused (400) once the token, the filter and the
    // session have passed, which is where the due mark used to be written.
    const refused = await client.call('POST', `/sessions/${opened.session}/events`, opened.token, [
      { kind: { name: 'message.submitted', version: 1 }, body: { text: '' } },
    ]);
    expect(refused.status).toBe(400);
    await sleep(600); // three sweeps
    expect(looks(opened.session)).toBe(0);

    await client.send(opened, 'a message it takes');
    await lookedAt(opened.session, 1);
  });

  it('is looked at once a minute, however many messages it takes meanwhile', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    await client.send(opened, 'the first message');
    await lookedAt(opened.session, 1);

    // Every sweep runs meanwhile; each message is marked due, for when the minute is over.
    const until = Date.now() + SENDING_MS;
    let sent = 1;
    while (Date.now() < until) {
      await client.send(opened, `message ${String(++sent)}`);
      await sleep(50);
    }
    await sleep(400);
    expect(looks(opened.session)).toBe(1);

    clock.jumpTo(Date.now() + PAST_RETRY_MS);
    await lookedAt(opened.session, 2);
    const log = await client.log(opened);
    expect(log.filter((r) => r.envelope.kind.name === 'message.submitted')).toHaveLength(sent);
    expect(log.some((r) => r.envelope.kind.name.startsWith('turn.'))).toBe(false);
  });
});
