import type { KeyObject } from 'node:crypto';
import { CompactSign, compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { jcs, sha256b64url } from './canonical.ts';

/**
 * The approval record (issue 50, docs/ap2.md "The approval decision"): what an operator decided
 * on an order that waited for a human approval, signed by this system so that anyone holding
 * the business's public keys (its UCP profile's `signing_keys`) checks it offline. A compact JWS
 * (RFC 7515), ES256, header `{alg, kid, typ: "order-approval+jws"}`, whose payload is the JCS
 * (RFC 8785) bytes of the record: the content is carried, not detached, so the record alone is
 * the evidence. No standard defines such a record (AP2 and UCP stop at the user's mandate; ACP
 * has only `payment_data.approval_required`): its members are ours, written in docs/ap2.md.
 */

export const APPROVAL_RECORD_TYP = 'order-approval+jws';
const ALGS = ['ES256', 'ES384', 'ES512'] as const;
/** A record names at most two approvals and a reason of 1,000 characters: 16 KiB is ample. */
export const MAX_APPROVAL_RECORD = 16_384;

/** The spend policy's thresholds that applied when the order was placed (amounts as text, "100.00"). */
export interface ApprovalPolicy {
  /** The SPIFFE ID the policy is written for (the order's identity or one above it). */
  readonly subject: string;
  readonly currency: string;
  /** Orders above this wait for one operator; absent: the policy asks no approval. */
  readonly approval_above?: string;
  /** Orders above this wait for two distinct operators (dual control). */
  readonly second_approval_above?: string;
}

export interface ApprovalRecord {
  readonly order_id: string;
  readonly decision: 'approved' | 'rejected';
  /** The order's amount, exact text with two decimals. */
  readonly amount: string;
  readonly currency: string;
  readonly policy: ApprovalPolicy;
  readonly approvals_required: 1 | 2;
  /** Each approval given, oldest first: the operator (their token's subject) and when (RFC 3339). */
  readonly approvals: readonly { readonly operator: string; readonly at: string; readonly note?: string }[];
  /** A rejection: who, when, why. */
  readonly rejection?: { readonly operator: string; readonly at: string; readonly reason: string };
  /** When the decision was taken (RFC 3339). */
  readonly decided_at: string;
}

/** The signed record, and its SHA-256 (base64url over the JWS text): what the audit entry names. */
export async function signApprovalRecord(
  record: ApprovalRecord,
  signer: { readonly kid: string; readonly key: KeyObject },
): Promise<{ readonly jws: string; readonly sha256: string }> {
  const jws = await new CompactSign(jcs(record))
    .setProtectedHeader({ alg: 'ES256', kid: signer.kid, typ: APPROVAL_RECORD_TYP })
    .sign(signer.key);
  return { jws, sha256: sha256b64url(jws) };
}

const CENTS = /^(0|[1-9]\d{0,11})\.\d{2}$/;
/** Exact cents of "123.45" (the only form the record carries); undefined otherwise. */
const centsOf = (v: unknown): number | undefined =>
  typeof v === 'string' && CENTS.test(v) ? Number(v.replace('.', '')) : undefined;

/**
 * How many approvals `policy` asks at `amount`, as the spend policy decides it
 * (subgraphs/procurement/spend/policy.ts `approvalsRequired`, "above" strict): written again
 * here because the offline check may use nothing of the server's but its public keys.
 */
export function requiredUnder(policy: ApprovalPolicy, amount: string): 0 | 1 | 2 | undefined {
  const a = centsOf(amount);
  if (a === undefined) return undefined;
  if (policy.approval_above === undefined) return policy.second_approval_above === undefined ? 0 : undefined;
  const first = centsOf(policy.approval_above);
  const second =
    policy.second_approval_above === undefined ? undefined : centsOf(policy.second_approval_above);
  if (first === undefined) return undefined;
  if (policy.second_approval_above !== undefined && second === undefined) return undefined;
  if (a <= first) return 0;
  return second !== undefined && a > second ? 2 : 1;
}

export type ApprovalRecordVerdict =
  | { readonly ok: true; readonly record: ApprovalRecord; readonly kid: string; readonly sha256: string }
  | { readonly ok: false; readonly problem: string };

const fail = (problem: string): ApprovalRecordVerdict => ({ ok: false, problem });
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

async function verifiedPayload(
  jws: string,
  keys: readonly JWK[],
): Promise<{ kid: string; payload: Uint8Array } | string> {
  let header: { alg?: unknown; kid?: unknown; typ?: unknown };
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    return 'the approval record is not a compact JWS';
  }
  const { alg, kid, typ } = header;
  if (typ !== APPROVAL_RECORD_TYP)
    return `the approval record's typ is ${JSON.stringify(typ)}, not ${APPROVAL_RECORD_TYP}`;
  if (typeof alg !== 'string' || !(ALGS as readonly string[]).includes(alg))
    return `the approval record's alg ${JSON.stringify(alg)} is not ES256, ES384 or ES512`;
  const jwk = keys.find((k) => k.kid === kid);
  if (typeof kid !== 'string' || !jwk)
    return `the approval record's kid ${JSON.stringify(kid)} names no business key`;
  if (jwk.alg !== undefined && jwk.alg !== alg) return `the business key ${kid} is ${jwk.alg}, not ${alg}`;
  try {
    const { payload } = await compactVerify(jws, await importJWK(jwk, alg), { algorithms: [alg] });
    return { kid, payload };
  } catch {
    return `the approval record's signature does not verify with the business key ${kid}`;
  }
}

/** What the record's content must say for the decision it claims; the problem, or undefined. */
export function recordProblem(r: ApprovalRecord, orderId: string): string | undefined {
  if (r.order_id !== orderId) return `the approval record is of order ${String(r.order_id)}, not ${orderId}`;
  const p = r.policy;
  if (!p || typeof p.subject !== 'string' || p.currency !== r.currency)
    return 'the approval record names no policy in its currency';
  const required = requiredUnder(p, r.amount);
  if (required === undefined)
    return 'the approval record carries an amount or a threshold that is not an amount';
  const thresholds = `above ${p.approval_above}${p.second_approval_above ? `, two above ${p.second_approval_above}` : ''} ${p.currency}`;
  if (required !== r.approvals_required)
    return `under policy ${p.subject} (approval ${thresholds}) an order of ${r.amount} needs ${required} approval(s), not the ${String(r.approvals_required)} the record lists`;
  const approvals = Array.isArray(r.approvals) ? r.approvals : [];
  const operators = new Set(approvals.map((a) => a.operator));
  if (operators.size !== approvals.length) return 'the approval record lists one operator twice';
  if (approvals.some((a) => typeof a.operator !== 'string' || !Number.isFinite(Date.parse(a.at))))
    return 'an approval of the record names no operator or no time';
  if (r.decision === 'approved')
    return approvals.length === required
      ? undefined
      : `the order was approved by ${approvals.length} operator(s), but its policy needs ${required}`;
  if (r.decision === 'rejected')
    return r.rejection && typeof r.rejection.operator === 'string' && approvals.length < required
      ? undefined
      : 'the rejection names no operator, or the order had all its approvals';
  return `unknown decision ${JSON.stringify(r.decision)}`;
}

/**
 * The offline check of an approval record: signed by a business key (alg from the list, the
 * key's own alg), for `orderId`, and consistent: the policy's thresholds at the order's amount
 * ask exactly the approvals required it lists, and an approval names that many distinct operators.
 */
export async function verifyApprovalRecord(
  jws: unknown,
  keys: readonly JWK[],
  orderId: string,
): Promise<ApprovalRecordVerdict> {
  if (typeof jws !== 'string' || jws.length > MAX_APPROVAL_RECORD)
    return fail('the approval record is not a JWS');
  const verified = await verifiedPayload(jws, keys);
  if (typeof verified === 'string') return fail(verified);
  let record: ApprovalRecord;
  try {
    record = JSON.parse(Buffer.from(verified.payload).toString('utf8')) as ApprovalRecord;
  } catch {
    return fail('the approval record is not JSON');
  }
  if (!isObject(record) || !isObject(record.policy) || !Array.isArray(record.approvals))
    return fail('the approval record is not an object with a policy and a list of approvals');
  if (!record.approvals.every(isObject) || (record.rejection !== undefined && !isObject(record.rejection)))
    return fail('an approval or the rejection of the record is not an object');
  const problem = recordProblem(record, orderId);
  return problem ? fail(problem) : { ok: true, record, kid: verified.kid, sha256: sha256b64url(jws) };
}
