/**
 * Procurement on the distributed topology (pricing, promotions and procurement in their own
 * processes, two gateway replicas, Redis and PostgreSQL): audit proofs across the replicas, then
 * the approval decision in the order's evidence, then the pendingApprovals page with pricing
 * unreachable.
 *
 * One topology for both suites, one after another: each started its own before, and a topology's
 * start is most of what they cost (5 processes, ~16 s of CPU; README "How long it takes"). The
 * page suite runs last: it stops the pricing process.
 */
import { afterAll } from 'vitest';
import { sharedDistributed } from '../../harness/distributed.ts';
import { approvalEvidenceSuite } from '../ap2/approval-evidence.distributed.suite.ts';
import { auditProofSuite } from './audit-proof.distributed.suite.ts';
import { pendingPageSuite } from './pending-page.distributed.suite.ts';

const distributed = sharedDistributed({ gateways: 2, label: 'procreplicas' });
const topology = distributed.get;
afterAll(distributed.close, 60_000);

auditProofSuite(topology);
approvalEvidenceSuite(topology);
pendingPageSuite(topology);
