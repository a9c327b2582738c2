import { readFile } from 'node:fs/promises';
import { TurnsClient } from './turns-client.ts';
import { Deployment } from './turns-deployment.ts';
const d = await Deployment.create({ redisUrl: 'redis://127.0.0.1:6379', databaseUrl: process.env.LOGONLY ? undefined : 'postgres://postgres@127.0.0.1:5432/test' });
const base = await d.start();
const client = new TurnsClient(base, d.operatorToken, 128);
const { key } = await client.install();
const mb = (n: number) => (n / 1048576).toFixed(1);
async function smaps(pid: number) {
  const text = await readFile(`/proc/${pid}/smaps`, 'utf8');
  const out = new Map<string, number>();
  let name = '';
  for (const line of text.split('\n')) {
    const m = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) { name = m[1] || '[anon]'; continue; }
    const r = /^Rss:\s+(\d+) kB/.exec(line);
    if (r) out.set(name, (out.get(name) ?? 0) + Number(r[1]) * 1024);
  }
  return out;
}
let prev = await smaps(d.pid);
for (const n of [0, 2000, 3000, 5000]) {
  if (n > 0) await client.openSessions(key, n);
  await new Promise((r) => setTimeout(r, 2000));
  const m = await d.retained();
  const s = await smaps(d.pid);
  const diff = [...s].map(([k, v]) => [k, v - (prev.get(k) ?? 0)] as const).filter(([, v]) => Math.abs(v) > 2 * 1048576);
  console.log(`+${n}: rss ${mb(m.rss)} heapTotal ${mb(m.heapTotal)} heapUsed ${mb(m.heapUsed)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)}`, diff.map(([k, v]) => `${k}:${mb(v)}`).join(' '));
  prev = s;
}
await d.stop();
