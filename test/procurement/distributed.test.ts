/** Two gateway processes on the machine's Redis: the suite in two-gateways.suite.ts. */
import { TEST_REDIS_URL } from '../../harness/services.ts';
import { twoGatewaySuite } from './two-gateways.suite.ts';

twoGatewaySuite('Redis', () => ({ REDIS_URL: TEST_REDIS_URL }));
