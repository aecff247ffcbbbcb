import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { LinkingParts } from '../../oauth/index.ts';
import type { AuditLog } from '../audit/log.ts';
import type { BlockStore } from '../block/store.ts';
import type { CheckoutService } from '../checkout/service.ts';
import type { IdempotencyStore } from '../idempotency/store.ts';
import type { ApiKeyVerifier } from '../identity/api-key.ts';
import type { OrderPort } from '../order/order-port.ts';
import type { BucketPolicy } from '../rate-limit/bucket.ts';
import type { BucketStore } from '../rate-limit/store.ts';
import type { CheckoutRehearsals } from '../rehearsal.ts';
import type { ScopePolicy } from '../scope/policy.ts';
import type { Ap2Parts } from './ap2.ts';
import type { UcpCartDeps } from './cart.ts';
import type { ProfileFetcher } from './platform-profile.ts';
import type { UcpRenderOptions } from './render.ts';
import type { signUcpResponses } from './response-signature.ts';
import type { UcpSignatureVerifier } from './signature.ts';

/** What the UCP REST endpoint (./routes.ts) and its checkout handlers (./checkout-handlers.ts) stand on. */
export interface UcpRouteDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly keys: ApiKeyVerifier;
  readonly signatures: UcpSignatureVerifier;
  readonly profiles: ProfileFetcher;
  readonly policy: ScopePolicy;
  readonly blocks: BlockStore;
  readonly buckets: BucketStore;
  readonly bucketPolicy: BucketPolicy;
  readonly idempotency: IdempotencyStore;
  readonly audit: AuditLog;
  readonly checkout: CheckoutService;
  readonly orders: OrderPort;
  readonly render: UcpRenderOptions;
  /** The AP2 mandates extension: the business's signing key, its verifying keys, the used mandates. */
  readonly ap2: Ap2Parts;
  /** The path of the REST endpoint, where the routes are served (`/ucp`). */
  readonly basePath: string;
  /** The REST endpoint (absolute), for order permalinks. */
  readonly restEndpoint: string;
  /** Where a buyer goes when nothing can be done over the API (the storefront / console). */
  readonly continueUrl: string;
  readonly defaultRegion: string;
  readonly bodyLimit: number;
  /** The cart capability (./cart.ts) and `cart_id` conversion; absent: neither. */
  readonly carts?: UcpCartDeps;
  /** More routes of the endpoint, in its scope (its parser, errors and unmatched paths): the catalog. */
  readonly more?: (scope: FastifyInstance, signResponse: ReturnType<typeof signUcpResponses>) => void;
  /** Identity linking (gateway/oauth/): its tokens are a credential, its challenge on 401/403. */
  readonly linking?: LinkingParts;
  /** The warm-up's checkout rehearsals (gateway/agent/rehearsal.ts), shared with ACP. */
  readonly rehearsals?: CheckoutRehearsals;
}
