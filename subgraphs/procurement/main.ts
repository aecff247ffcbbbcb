import { runSubgraph } from '../../lib/graphql/main-subgraph.ts';
import { createProcurementSubgraph } from './index.ts';

await runSubgraph('procurement', createProcurementSubgraph, 4003);
