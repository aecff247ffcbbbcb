/**
 * Run under strace by test/faults/rehearsal-sync.test.ts: the embedded store on disk with
 * EMBEDDED_DB_FSYNC=on (from the suite's template when it has one), then 20 orders placed and
 * 20 rehearsed, each stretch between markers written to stderr so its syncs alone are counted.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_PGLITE } from '../../../harness/services.ts';
import { ManualClock } from '../../../lib/clock.ts';
import { migrate } from '../../../lib/db/index.ts';
import { openPglite } from '../../../lib/db/pglite.ts';
import type { UsdAmount } from '../../../subgraphs/procurement/contract/types.ts';
import { createOrderDomain, newOrderId } from '../../../subgraphs/procurement/domain/order-domain.ts';
import { orderMigrations } from '../../../subgraphs/procurement/store/migrations.ts';
import { sqlOrderStore } from '../../../subgraphs/procurement/store/sql.ts';

const db = await openPglite(mkdtempSync(join(tmpdir(), 'ac-rehearsal-sync-')), {
  ...TEST_PGLITE,
  sync: 'on',
});
await migrate(db, orderMigrations);
const domain = createOrderDomain(sqlOrderStore(db), new ManualClock());
const orders = async (rehearsal: boolean) => {
  for (let i = 0; i < 20; i++)
    await domain.place({
      request: {
        agent_id: 'agent-0000001',
        sku: 'SKU-ABC-123456',
        quantity: 1,
        max_budget_usd: '10' as UsdAmount,
      },
      spiffeId: 'spiffe://example.org/ns/ai/sa/procurement-agent/warm-up',
      traceId: 'warm-up',
      orderId: newOrderId(),
      ...(rehearsal ? { rehearsal: true as const } : {}),
    });
};
process.stderr.write('PLACED-START\n');
await orders(false);
process.stderr.write('REHEARSED-START\n');
await orders(true);
process.stderr.write('REHEARSED-END\n');
await db.close();
