import { migrate } from '../../lib/db/index.ts';
import { EventTypes } from '../../lib/events/cloudevent.ts';
import type { Platform } from '../../lib/platform.ts';
import type {
  PricedBasket,
  PromotionEvaluation,
  PromotionService,
  RedemptionRequest,
  RedemptionResult,
  ReleaseRequest,
  ReleaseResult,
} from './api.ts';
import { promotionsContract, violations } from './contract.ts';
import { toBasket } from './domain/basket.ts';
import { BasketInvalid, PromotionNotFound, RedemptionInvalid } from './domain/errors.ts';
import { evaluate } from './domain/evaluate.ts';
import { type CompiledRule, compileRule, type RuleStatus } from './domain/rule.ts';
import { buildRuleset, emptyRuleset, type Ruleset } from './domain/ruleset.ts';
import { checkDrafts, type PromotionPreview, withDrafts } from './preview.ts';
import { migrations } from './store/migrations.ts';
import type { RedemptionStore } from './store/redemptions.ts';
import { withCountCache } from './store/redemptions-cache.ts';
import { createRedisRedemptionStore } from './store/redemptions-redis.ts';
import { createSqlRedemptionStore } from './store/redemptions-sql.ts';
import { RuleStore, type StoredRule } from './store/rules.ts';

/** CloudEvent data of PromotionRulesChanged (schemas/events/promotion-rules-changed.json). */
export interface PromotionRulesChanged {
  promotionId: string;
  change: 'UPSERT' | 'STATUS';
  revision: number;
  status: RuleStatus;
  changedAt: string;
  changedBy: string | null;
}

/** A stored rule with its compiled form. */
export interface Promotion extends StoredRule {
  compiled: CompiledRule;
}

/** The promotions module's service: PromotionService plus rule administration. */
export interface PromotionEngine extends PromotionService {
  readonly redemptions: RedemptionStore;
  /** The rules this instance evaluates right now. */
  ruleset(): Ruleset;
  list(status?: RuleStatus): Promotion[];
  get(promotionId: string): Promotion | undefined;
  /** Validates (RuleInvalid), stores, recompiles here and tells every instance. */
  upsert(document: unknown, changedBy?: string): Promise<Promotion>;
  setStatus(promotionId: string, status: RuleStatus, changedBy?: string): Promise<Promotion>;
  /** An order was cancelled: gives back its redemptions. Throws RedemptionInvalid (422) on bad input. */
  release(request: ReleaseRequest): Promise<ReleaseResult>;
  /**
   * The rule editor's preview (nothing stored): each draft validated as `upsert` validates it,
   * then, when all are valid, the basket evaluated with the drafts in place of (or beside) the
   * stored rules. Throws BasketInvalid (422) on a bad basket, PreviewInvalid on too many drafts.
   */
  preview(basket: PricedBasket, drafts: readonly unknown[]): Promise<PromotionPreview>;
  /** Reloads and recompiles every stored rule (on start and on PromotionRulesChanged). */
  reload(): Promise<void>;
  close(): Promise<void>;
}

export async function createPromotionService(platform: Platform): Promise<PromotionEngine> {
  await migrate(platform.db, migrations);
  const store = new RuleStore(platform.db);
  const redemptions = redemptionStoreFor(platform);
  const contract = promotionsContract();
  let ruleset = emptyRuleset;
  let promotions = new Map<string, Promotion>();

  // Reloads are chained: a burst of changes never compiles two sets at once, and the last
  // reload always sees the last write.
  let reloading: Promise<void> = Promise.resolve();
  const reload = (): Promise<void> => {
    reloading = reloading
      .catch(() => {})
      .then(async () => {
        const next = new Map<string, Promotion>();
        for (const stored of await store.all()) {
          try {
            next.set(stored.promotionId, { ...stored, compiled: compileRule(stored.document) });
          } catch (err) {
            // A stored rule this engine cannot read must not take the others down with it.
            platform.log.error(
              { err, promotionId: stored.promotionId },
              'stored promotion rule does not compile',
            );
          }
        }
        promotions = next;
        ruleset = buildRuleset([...next.values()].map((p) => p.compiled));
        platform.log.info({ rules: next.size, active: ruleset.active.length }, 'promotion rules compiled');
      });
    return reloading;
  };
  await reload();
  const unsubscribe = platform.bus.subscribe(EventTypes.PromotionRulesChanged, () => reload());
  // An order that ends without being bought (cancelled, rejected by an operator, its approval
  // expired) gives back the redemptions its checkout recorded. Every instance reads every event;
  // a release is idempotent (a repeat finds nothing), so replicas need no coordination.
  const releaseOf = async (event: { data: unknown }) => {
    const d = event.data as { order_id?: unknown; agent_id?: unknown };
    if (typeof d.order_id !== 'string' || typeof d.agent_id !== 'string') return;
    await redemptions
      .release(d.order_id, d.agent_id)
      .catch((err) => platform.log.error({ err, orderId: d.order_id }, 'redemptions not released'));
  };
  const unsubscribeOrders = [
    EventTypes.OrderCancelled,
    EventTypes.OrderRejected,
    EventTypes.OrderExpired,
  ].map((type) => platform.bus.subscribe(type, releaseOf));

  const changed = async (
    stored: StoredRule,
    change: PromotionRulesChanged['change'],
    changedBy: string | undefined,
  ): Promise<Promotion> => {
    const compiled = compileRule(stored.document);
    // Recompile here before answering (the caller reads its own write); the event tells the others.
    await reload();
    await platform.bus.publish<PromotionRulesChanged>(
      EventTypes.PromotionRulesChanged,
      {
        promotionId: stored.promotionId,
        change,
        revision: stored.revision,
        status: compiled.status,
        changedAt: stored.updatedAt,
        changedBy: changedBy ?? null,
      },
      stored.promotionId,
    );
    return { ...stored, compiled };
  };

  return {
    redemptions,
    ruleset: () => ruleset,
    list: (status) => [...promotions.values()].filter((p) => !status || p.compiled.status === status),
    get: (id) => promotions.get(id),

    async evaluate(input: PricedBasket): Promise<PromotionEvaluation> {
      if (!contract.pricedBasket(input)) throw new BasketInvalid(violations(contract.pricedBasket.errors));
      const basket = toBasket(input);
      const rules = ruleset;
      const redeemed =
        rules.capped && basket.customerId !== undefined
          ? await redemptions.countsFor(basket.customerId)
          : new Map<string, number>();
      return evaluate(rules, basket, { now: platform.clock.now(), redeemed });
    },

    async preview(input, drafts) {
      if (!contract.pricedBasket(input)) throw new BasketInvalid(violations(contract.pricedBasket.errors));
      const checked = checkDrafts(drafts, (id) => promotions.has(id));
      if (!checked.valid) return { valid: false, drafts: checked.drafts, evaluation: null };
      const basket = toBasket(input);
      const rules = withDrafts(promotions, checked.compiled);
      const redeemed =
        rules.capped && basket.customerId !== undefined
          ? await redemptions.countsFor(basket.customerId)
          : new Map<string, number>();
      return {
        valid: true,
        drafts: checked.drafts,
        evaluation: evaluate(rules, basket, { now: platform.clock.now(), redeemed }),
      };
    },

    async redeem(request: RedemptionRequest): Promise<RedemptionResult> {
      if (!contract.redemptionRequest(request))
        throw new RedemptionInvalid(violations(contract.redemptionRequest.errors));
      const items = request.promotionIds.map((id) => {
        const p = promotions.get(id);
        if (!p) throw new PromotionNotFound(id);
        return { promotionId: id, cap: p.compiled.maxRedemptionsPerUser };
      });
      return redemptions.redeem(request.orderId, request.customerId, items);
    },

    async release(request: ReleaseRequest): Promise<ReleaseResult> {
      if (!contract.releaseRequest(request))
        throw new RedemptionInvalid(violations(contract.releaseRequest.errors));
      return redemptions.release(request.orderId, request.customerId);
    },

    async upsert(document, changedBy) {
      const compiled = compileRule(document);
      return changed(await store.upsert(compiled.document), 'UPSERT', changedBy);
    },

    async setStatus(promotionId, status, changedBy) {
      const stored = await store.setStatus(promotionId, status);
      if (!stored) throw new PromotionNotFound(promotionId);
      return changed(stored, 'STATUS', changedBy);
    },

    reload,
    async close() {
      unsubscribe();
      for (const off of unsubscribeOrders) off();
      await reloading.catch(() => {});
    },
  };
}

function redemptionStoreFor(platform: Platform): RedemptionStore {
  if (platform.config.PROMOTION_REDEMPTION_STORE === 'redis') {
    if (!platform.redis) throw new Error('PROMOTION_REDEMPTION_STORE=redis needs REDIS_URL');
    return createRedisRedemptionStore(platform.redis, platform.config.REDIS_KEY_PREFIX);
  }
  const sql = createSqlRedemptionStore(platform.db);
  // Only the embedded store is written by this process alone (see redemptions-cache.ts).
  return platform.db.kind === 'pglite' ? withCountCache(sql) : sql;
}
