import '../../lib/source-maps.ts';
import '../../lib/telemetry/preload.ts';
import { runSubgraph } from '../../lib/graphql/main-subgraph.ts';
import { createPromotionsSubgraph } from './index.ts';

await runSubgraph('promotions', createPromotionsSubgraph, 4002);
