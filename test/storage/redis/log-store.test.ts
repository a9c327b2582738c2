/**
 * The log store contract on Redis Streams: the shared suite on the real server.
 */
import { describeLogStore } from '../../contracts/log-store.contract.ts';
import { redisFixture } from './redis-fixture.ts';

describeLogStore('redis', async () => {
  const fixture = await redisFixture();
  return { open: () => fixture.open(), cleanup: () => fixture.cleanup() };
});
