/**
 * The promotions API other areas build on (the edge's consolidated cart quote, the order flow).
 * Stable: add optional fields only. The shapes are defined in domain/shapes.ts (the pure core
 * must not import this file, which imports the service) and re-exported here unchanged; the REST
 * contract of the same shapes is schemas/openapi/promotions.yaml (POST /v1/promotions/evaluate);
 * docs/promotions.md explains them.
 */
import type {
  PricedBasket,
  PromotionEvaluation,
  RedemptionRequest,
  RedemptionResult,
} from './domain/shapes.ts';

export type * from './domain/shapes.ts';

/** What the promotions module offers in process (the edge uses it in the embedded topology). */
export interface PromotionService {
  /** Evaluates the active rules against a priced basket. Throws BasketInvalid (422) on bad input. */
  evaluate(basket: PricedBasket): Promise<PromotionEvaluation>;
  /** Consumes redemptions atomically across replicas. Throws RedemptionInvalid (422) on bad input. */
  redeem(request: RedemptionRequest): Promise<RedemptionResult>;
}

export { BasketInvalid, RedemptionInvalid } from './domain/errors.ts';
/** The factory: `createPromotionService(platform)` (the subgraph module also exposes it as `api`). */
export { createPromotionService, type PromotionEngine } from './service.ts';
