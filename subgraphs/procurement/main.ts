import '../../lib/source-maps.ts';
import '../../lib/telemetry/preload.ts';
import { runSubgraph } from '../../lib/graphql/main-subgraph.ts';
import { createProcurementSubgraph } from './index.ts';

// Its own process (distributed topology): the order domain is also served to remote gateways.
await runSubgraph(
  'procurement',
  (platform) => createProcurementSubgraph(platform, { internalHttp: true }),
  4003,
);
