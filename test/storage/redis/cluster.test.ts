/**
 * The log store contract on a Redis Cluster: the shared suite on the
 * local 3-master cluster `.ci/run` starts. Its streams spread over the three masters, so
 * every instance's reader follows streams on several nodes at once.
 */
import { describeLogStore } from '../../contracts/log-store.contract.ts';
import { clusterFixture } from './cluster-fixture.ts';

describeLogStore('redis cluster', async () => {
  const fixture = await clusterFixture();
  return { open: () => fixture.open(), cleanup: () => fixture.cleanup() };
});
