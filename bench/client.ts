/**
 * `npm run bench:client`: what the typed client (`packages/client`) costs beside
 * plain `fetch` and `WebSocket` making the same requests, in the same run, against the
 * same service. One table; every row holds the client's figure, the plain baseline, their
 * ratio and the target (within 10%: a ratio of at least 0.9).
 *
 * Processes. The service is `node src/main.ts` in a child process on the embedded default
 * (`turns-deployment.ts`: SQLite in a fresh data folder, rate limits far above loopback);
 * this process is the load (`client-load.ts`), so it never shares the service's event
 * loop. On a 2-core machine both share the cores: the figures are for the machine as a
 * whole, and so are the baselines.
 *
 * Setup, through the client: the operator grant signs an owner in, who makes the tenant
 * and its `simulated` inference option; a vendor proposes, the owner consents, the
 * vendor's poll receives the install key, which opens WRITERS + 1 sessions.
 *
 * 1. appends/s, one record per call: WRITERS closed-loop writers, one session each, the
 *    record a `turn.cancel` (a principal's record that lands and starts no turn), for
 *    ROUNDS rounds of ROUND_SECONDS each way after a warm-up, client and plain taking
 *    turns so that drift hits both. Target: client >= 0.9 x plain.
 * 2. tail records/s, NDJSON and WebSocket: one session holding TAIL_RECORDS records, read
 *    from cursor 1 to its head TAIL_READS times each way per round, in ROUNDS rounds
 *    taking turns. Target: client >= 0.9 x plain.
 *
 * BENCH_ROUND_SECONDS and BENCH_TAIL_RECORDS make a run shorter or longer.
 */
// This checkout's client, by path: `node_modules` may link another checkout's package.
import { bearer, bodyOf, createClient, type SessionGrant } from '../packages/client/src/index.ts';
import {
  appendLoad,
  CANCEL,
  clientAppend,
  clientTail,
  plainAppend,
  plainNdjsonTail,
  plainWebSocketTail,
  tailLoad,
  type Measured,
} from './client-load.ts';
import { loadAverage, ms, rate, table } from './table.ts';
import { Deployment } from './turns-deployment.ts';

const WRITERS = 8;
const ROUNDS = 5;
const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 3);
const TAIL_RECORDS = Number(process.env.BENCH_TAIL_RECORDS ?? 20_000);
const TAIL_READS = 2;
/** The target: the client's overhead within 10%. */
const FLOOR = 0.9;

console.log(`load average at start: ${loadAverage()}`);
const deployment = await Deployment.create({});
process.once('SIGINT', () => void deployment.drop().then(() => process.exit(130)));

/** An install of a fresh tenant, and WRITERS + 1 sessions of it. */
async function setUp(base: string): Promise<SessionGrant[]> {
  const service = createClient({ baseUrl: base });
  const { token } = await bodyOf(
    service.api.POST('/console/token', {
      body: { user: 'ada', tenant: 'bench' },
      headers: bearer(deployment.operatorToken),
    }),
  );
  const owner = service.with({ consoleToken: token });
  await owner.api.PUT('/console/tenant', { body: { name: 'Bench' }, headers: bearer(token) });
  await owner.api.PUT('/inferences/{id}', {
    params: { path: { id: 'simulated' } },
    body: { provider: 'simulated' },
    headers: bearer(token),
  });
  const proposal = await service.propose({
    appdoc: 1,
    name: 'Client bench',
    description: 'Appends and tails.',
    tools: [],
  });
  await owner.api.POST('/consent/{request}', {
    params: { path: { request: proposal.request } },
    body: { inference: 'simulated' },
    headers: bearer(token),
  });
  const receipt = await service.waitForConsent(proposal);
  const vendor = service.with({ installKey: receipt.key ?? '' });
  const grants: SessionGrant[] = [];
  for (let i = 0; i <= WRITERS; i += 1) grants.push(await vendor.openSession(`bench-${i}`));
  return grants;
}

/** The figures of each way, summed over rounds that take turns. */
async function alternate(
  ways: Record<string, () => Promise<Measured>>,
): Promise<Record<string, Measured>> {
  const runs: Record<string, Measured[]> = {};
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, run] of Object.entries(ways)) (runs[name] ??= []).push(await run());
  }
  const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return Object.fromEntries(
    Object.entries(runs).map(([name, measured]) => [
      name,
      { rate: mean(measured.map((m) => m.rate)), p50: mean(measured.map((m) => m.p50)) },
    ]),
  );
}

function row(name: string, ours: Measured, base: Measured, notes: string): string[] {
  const ratio = ours.rate / base.rate;
  return [
    name,
    rate(ours.rate),
    rate(base.rate),
    ratio.toFixed(2),
    `>= ${FLOOR} ${ratio >= FLOOR ? 'met' : 'MISSED'}`,
    notes,
  ];
}

const rows: string[][] = [];
try {
  const base = await deployment.start();
  const grants = await setUp(base);
  const [tailGrant, ...writers] = grants as [SessionGrant, ...SessionGrant[]];
  const client = createClient({ baseUrl: base });

  // Appends: a warm-up each way, then rounds taking turns.
  const byClient = clientAppend(client);
  const byHand = plainAppend(base);
  await appendLoad(byClient, writers, 1);
  await appendLoad(byHand, writers, 1);
  const appends = await alternate({
    client: () => appendLoad(byClient, writers, ROUND_SECONDS),
    plain: () => appendLoad(byHand, writers, ROUND_SECONDS),
  });
  rows.push(
    row(
      `appends/s, 1 record/call, ${WRITERS} writers`,
      appends.client ?? { rate: 0, p50: 0 },
      appends.plain ?? { rate: 0, p50: 0 },
      `answer p50 ms ${ms(appends.client?.p50 ?? 0)}/${ms(appends.plain?.p50 ?? 0)}`,
    ),
  );

  // Tails: the session filled in batches of 100, then read to its head each way.
  const filler = client.session(tailGrant);
  for (let landed = 0; landed < TAIL_RECORDS; landed += 100) {
    await filler.append(Array.from({ length: 100 }, () => CANCEL));
  }
  const to = (await filler.status()).head + 1;
  const tails = {
    'client ndjson': clientTail(client, 'ndjson'),
    'plain ndjson': plainNdjsonTail(base),
    'client websocket': clientTail(client, 'websocket'),
    'plain websocket': plainWebSocketTail(base),
  };
  for (const tail of Object.values(tails)) await tailLoad(tail, tailGrant, to, 1);
  const read = await alternate(
    Object.fromEntries(
      Object.entries(tails).map(([name, tail]) => [
        name,
        () => tailLoad(tail, tailGrant, to, TAIL_READS),
      ]),
    ),
  );
  for (const transport of ['ndjson', 'websocket']) {
    rows.push(
      row(
        `tail records/s, ${transport}, cursor 1 to ${to - 1}`,
        read[`client ${transport}`] ?? { rate: 0, p50: 0 },
        read[`plain ${transport}`] ?? { rate: 0, p50: 0 },
        `${TAIL_READS * ROUNDS} reads each way`,
      ),
    );
  }
  deployment.check();
} finally {
  await deployment.drop();
}

console.log(
  `\nThe typed client beside plain fetch and WebSocket, same service, same run; ${ROUNDS} rounds taking turns, appends ${ROUND_SECONDS} s a round`,
);
console.log(table(['row', 'client', 'plain', 'ratio', 'target', 'notes (client/plain)'], rows));
console.log('\nratio: client / plain; records/s, higher is better');
console.log(`load average at end: ${loadAverage()}`);
