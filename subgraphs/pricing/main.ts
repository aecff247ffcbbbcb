import '../../lib/source-maps.ts';
import '../../lib/telemetry/preload.ts';
import { runSubgraph } from '../../lib/graphql/main-subgraph.ts';
import { createPricingSubgraph } from './index.ts';

await runSubgraph('pricing', createPricingSubgraph, 4001);
