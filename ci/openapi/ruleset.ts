/**
 * The AI-safety lint of our OpenAPI documents: Spectral's OpenAPI ruleset, the OWASP API
 * Security ruleset (from node_modules, no network), a few documented adjustments, and our rules
 * for agent-facing operations (ci/openapi/agent-rules.ts). Severity `error` fails the lint.
 */
import type { RulesetDefinition } from '@stoplight/spectral-core';
import { pattern } from '@stoplight/spectral-functions';
import owaspModule from '@stoplight/spectral-owasp-ruleset';
import { oas } from '@stoplight/spectral-rulesets';
import {
  agentErrorResponses,
  agentIdempotencyKey,
  agentMarkerBoolean,
  agentNumberBounded,
  agentRequestClosed,
  agentRetryAfter,
  agentSecurity,
  agentStringBounded,
} from './agent-rules.ts';

// The package is CommonJS compiled from ESM: its default export may arrive wrapped once more.
const owasp = ((owaspModule as unknown as { default?: unknown }).default ?? owaspModule) as RulesetDefinition;

const PATH_ITEMS = '$.paths[*]';

/** A rule of ours, always an error. */
function rule(
  description: string,
  given: string,
  fn: unknown,
  opts: { message?: string; functionOptions?: Record<string, unknown> } = {},
) {
  const then = { function: fn, ...(opts.functionOptions ? { functionOptions: opts.functionOptions } : {}) };
  return { description, message: opts.message ?? '{{error}}', severity: 'error', given, then };
}

const PATTERN_OPTIONS = {
  'openapi-3.1': { match: '^3\\.([1-9]|[1-9]\\d)\\.\\d+$' },
  // http only on loopback (local development); every other server https.
  'servers-https': { notMatch: '^http://(?!(127\\.0\\.0\\.1|localhost|\\[::1\\])(:\\d+)?(/|$))' },
};

/** Our own rules; each can be tested alone with a fixture document. */
export const AGENT_RULES = {
  'openapi-3.1': rule('Contracts are OpenAPI 3.1 or later (spec, Versioning 3).', '$.openapi', pattern, {
    message: 'openapi is {{value}}: contracts are written in OpenAPI 3.1 or later',
    functionOptions: PATTERN_OPTIONS['openapi-3.1'],
  }),
  'servers-https': rule(
    'Servers use https, except loopback development servers.',
    '$.servers[*].url',
    pattern,
    {
      message:
        'server {{value}} uses http://: use https:// (http is allowed only on loopback, for local development)',
      functionOptions: PATTERN_OPTIONS['servers-https'],
    },
  ),
  'agent-facing-marker': rule('x-agent-facing is a boolean.', PATH_ITEMS, agentMarkerBoolean),
  'agent-request-closed': rule(
    'Every object in an agent request refuses unknown fields.',
    PATH_ITEMS,
    agentRequestClosed,
  ),
  'agent-string-bounded': rule(
    'Every string in an agent request is bounded.',
    PATH_ITEMS,
    agentStringBounded,
  ),
  'agent-number-bounded': rule(
    'Every number in an agent request has a minimum and a maximum.',
    PATH_ITEMS,
    agentNumberBounded,
  ),
  'agent-security': rule(
    'Every agent-facing operation has a security requirement.',
    PATH_ITEMS,
    agentSecurity,
  ),
  'agent-error-responses': rule(
    'Agent-facing operations declare 401, 403, 422 and 429.',
    PATH_ITEMS,
    agentErrorResponses,
  ),
  'agent-429-retry-after': rule(
    'The 429 of an agent-facing operation declares Retry-After.',
    PATH_ITEMS,
    agentRetryAfter,
  ),
  'agent-idempotency-key': rule(
    'Agent mutations accept an Idempotency-Key header.',
    PATH_ITEMS,
    agentIdempotencyKey,
  ),
};

/**
 * Adjustments to the published rulesets, each with its reason (docs/contracts.md repeats them).
 */
export const ADJUSTMENTS: Record<string, { severity: 'off' | 'warn' | 'info'; reason: string }> = {
  'owasp:api8:2023-define-cors-origin': {
    severity: 'off',
    reason:
      'no browser calls these APIs and the services send no CORS headers; declaring them would make the contract lie',
  },
  'owasp:api8:2023-no-server-http': {
    severity: 'off',
    reason:
      'replaced by servers-https, which also refuses http:// but allows a loopback development server (http://127.0.0.1:8080)',
  },
  'owasp:api4:2023-rate-limit': {
    severity: 'warn',
    reason:
      'only the agent paths are rate-limited (spec, Limits); documents declare RateLimit headers where the server sends them',
  },
};

export const ruleset: RulesetDefinition = {
  extends: [[oas as RulesetDefinition, 'recommended'], owasp],
  rules: {
    ...AGENT_RULES,
    ...Object.fromEntries(Object.entries(ADJUSTMENTS).map(([name, a]) => [name, a.severity])),
  },
} as RulesetDefinition;
