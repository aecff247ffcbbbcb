/** Two promotions processes on the machine's Redis: the suite in redemption-replicas.suite.ts. */
import { TEST_REDIS_URL } from '../../harness/services.ts';
import { redemptionReplicasSuite } from './redemption-replicas.suite.ts';

redemptionReplicasSuite('Redis', () => ({ REDIS_URL: TEST_REDIS_URL }));
