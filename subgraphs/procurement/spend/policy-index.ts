import type { EventBus } from '../../../lib/events/bus.ts';
import { EventTypes } from '../../../lib/events/cloudevent.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { SpendLedger } from './ledger.ts';

/** How often every process re-reads the subjects, in case a change event was missed. */
export const POLICY_INDEX_REFRESH_MS = 5_000;

/**
 * Which SPIFFE IDs have a spend policy, kept in every process that uses a Redis ledger, so an
 * order of an identity no policy covers (most of them, when policies are the exception) is
 * decided without a Redis call. Why: all spend state shares one Redis Cluster slot (its scripts
 * need the policy and the ledger together); without this index a paused or failed primary of
 * that slot stopped every order of every agent, policy or not. Now it stops only the orders of
 * identities that have a policy: their check stays one atomic script, which re-reads the policy
 * itself, so the index never loosens a budget that exists.
 *
 * What the index may get wrong, briefly: a policy just set for an identity that had none is
 * enforced once its change event reaches the process (milliseconds; at worst the next refresh,
 * POLICY_INDEX_REFRESH_MS). Until the first read succeeds the index is unknown and every order
 * asks Redis, as before; `ready()` (the process's /readyz check `spend-policy-index`) refuses
 * until then, so a load balancer sends no agent to a replica that would need the slot for all.
 * (docs/spend.md, "Availability".)
 */
export function withPolicyIndex(
  ledger: SpendLedger,
  bus: EventBus,
  log: Logger,
): SpendLedger & { ready(): Promise<void>; close(): void } {
  let subjects: ReadonlySet<string> | undefined;
  const read = () =>
    ledger
      .listPolicies()
      .then((all) => {
        subjects = new Set(all.map((p) => p.subject));
      })
      .catch((err) => log.warn({ err }, 'spend policy index not refreshed; the last one stays'));
  // One read at a time; a load asked for while one runs gets a fresh read after it (that read
  // may have started before the change it was asked for), and several such asks share it.
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const load = (): Promise<void> => {
    if (queued) return queued;
    if (running) {
      queued = running.then(() => {
        queued = undefined;
        return load();
      });
      return queued;
    }
    running = read().finally(() => {
      running = undefined;
    });
    return running;
  };
  const unsubscribe = bus.subscribe(EventTypes.SpendPoliciesChanged, () => load());
  const timer = setInterval(() => void load(), POLICY_INDEX_REFRESH_MS);
  timer.unref();
  void load();
  /** False only when the index is known and no candidate has a policy. */
  const mayHavePolicy = (candidates: readonly string[]) =>
    subjects === undefined || candidates.some((c) => subjects?.has(c));
  const changed = async (subject: string, has: boolean) => {
    // This process knows at once; the others when the event arrives (or at their next refresh).
    if (subjects) {
      const next = new Set(subjects);
      if (has) next.add(subject);
      else next.delete(subject);
      subjects = next;
    }
    await bus
      .publish(EventTypes.SpendPoliciesChanged, { subject }, subject)
      .catch((err) =>
        log.warn({ err }, 'spend policy change not announced; replicas see it at their next refresh'),
      );
  };

  return {
    ...ledger,
    /** Resolves once the index is known; while it is not, asks for a read (shared) and refuses if that fails. */
    async ready() {
      if (subjects !== undefined) return;
      await load();
      if (subjects === undefined) throw new Error('spend policy index not read yet');
    },
    close() {
      clearInterval(timer);
      unsubscribe();
    },
    async putPolicy(policy) {
      await ledger.putPolicy(policy);
      await changed(policy.subject, true);
    },
    async deletePolicy(subject) {
      const removed = await ledger.deletePolicy(subject);
      if (removed) await changed(subject, false);
      return removed;
    },
    async status(candidates, now) {
      return mayHavePolicy(candidates) ? ledger.status(candidates, now) : null;
    },
    async reserve(r) {
      return mayHavePolicy(r.candidates) ? ledger.reserve(r) : { kind: 'no-policy' };
    },
  };
}
