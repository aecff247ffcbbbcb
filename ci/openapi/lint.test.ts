import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { errorsOf, type Finding, lintFile, lintText } from './lint.ts';

const fixture = (name: string) => new URL(`../fixtures/openapi/${name}`, import.meta.url).pathname;
const GOOD = fixture('agent-order.yaml');

// biome-ignore lint/suspicious/noExplicitAny: fixture documents are free-form YAML, changed in place.
type Doc = Record<string, any>;
const good = (): Doc => YAML.parse(readFileSync(GOOD, 'utf8'));
const ORDER = '/api/v2/procurement/orders';
const op = (d: Doc) => d.paths[ORDER].post;
const request = (d: Doc) => d.components.schemas.PurchaseOrderRequest;

/** Lints the good document after one change; the document keeps its folder for $refs. */
async function lintVariant(change: (d: Doc) => void): Promise<Finding[]> {
  const d = good();
  change(d);
  return errorsOf(await lintText(YAML.stringify(d), GOOD));
}

const rulesOf = (findings: readonly Finding[]) => [...new Set(findings.map((f) => f.rule))].sort();

describe('the AI-safety lint of OpenAPI documents', () => {
  it('passes the compliant agent-facing fixture with no error (every rule can be satisfied)', async () => {
    expect(errorsOf(await lintFile(GOOD))).toEqual([]);
  });

  it.each([
    ['open-request-object.yaml', 'agent-request-closed', 'request body / is an open object'],
    ['unbounded-string.yaml', 'agent-string-bounded', '/properties/agent_id is an unbounded string'],
    ['missing-429.yaml', 'agent-error-responses', 'does not declare a 429 response'],
  ])('fails the fixture %s with %s', async (file, rule, message) => {
    const errors = errorsOf(await lintFile(fixture(file)));
    const hit = errors.find((f) => f.rule === rule);
    expect(hit?.message).toContain(message);
    expect(hit?.message).toContain(`POST ${ORDER}`);
  });

  const cases: [string, string, string, (d: Doc) => void][] = [
    [
      'a nested open object',
      'agent-request-closed',
      '/properties/meta is an open object',
      (d) => {
        request(d).properties.meta = {
          type: 'object',
          properties: { note: { type: 'string', maxLength: 10 } },
        };
      },
    ],
    [
      'an untyped property',
      'agent-request-closed',
      '/properties/anything has no type',
      (d) => {
        request(d).properties.anything = {};
      },
    ],
    [
      'a string bounded only by an unanchored pattern',
      'agent-string-bounded',
      '/properties/sku is an unbounded string',
      (d) => {
        request(d).properties.sku = { type: 'string', pattern: 'SKU-' };
      },
    ],
    [
      'an unbounded header parameter',
      'agent-string-bounded',
      'header parameter Idempotency-Key',
      (d) => {
        d.components.parameters.IdempotencyKey.schema = { type: 'string', minLength: 1 };
      },
    ],
    [
      'an integer without maximum',
      'agent-number-bounded',
      '/properties/quantity is an unbounded number: give it a maximum',
      (d) => {
        delete request(d).properties.quantity.maximum;
      },
    ],
    [
      'a number without lower bound',
      'agent-number-bounded',
      '/properties/max_budget_usd is an unbounded number: give it a minimum',
      (d) => {
        delete request(d).properties.max_budget_usd.exclusiveMinimum;
      },
    ],
    [
      'no security requirement',
      'agent-security',
      'has no security requirement',
      (d) => {
        op(d).security = [];
      },
    ],
    [
      'an optional (empty) security alternative',
      'agent-security',
      'has no security requirement',
      (d) => {
        op(d).security = [{ spiffe: [] }, {}];
      },
    ],
    [
      'no 401',
      'agent-error-responses',
      'does not declare a 401 response',
      (d) => {
        delete op(d).responses['401'];
      },
    ],
    [
      'no 403',
      'agent-error-responses',
      'does not declare a 403 response',
      (d) => {
        delete op(d).responses['403'];
      },
    ],
    [
      'no 422',
      'agent-error-responses',
      'does not declare a 422 response',
      (d) => {
        delete op(d).responses['422'];
      },
    ],
    [
      'a 429 without Retry-After',
      'agent-429-retry-after',
      'the 429 response does not declare a Retry-After header',
      (d) => {
        delete d.components.responses.TooManyRequests.headers['Retry-After'];
      },
    ],
    [
      'an agent mutation without Idempotency-Key',
      'agent-idempotency-key',
      'does not declare an Idempotency-Key header parameter',
      (d) => {
        op(d).parameters = [{ $ref: '#/components/parameters/TraceId' }];
      },
    ],
    [
      'a marker that is not a boolean',
      'agent-facing-marker',
      'x-agent-facing must be true or false',
      (d) => {
        op(d)['x-agent-facing'] = 'yes';
      },
    ],
    [
      'OpenAPI 3.0',
      'openapi-3.1',
      'openapi is 3.0.3',
      (d) => {
        d.openapi = '3.0.3';
      },
    ],
    [
      'a plain-http server that is not loopback',
      'servers-https',
      'uses http://',
      (d) => {
        d.servers[0].url = 'http://gateway.agent-commerce.example';
      },
    ],
  ];

  it.each(cases)('fails %s with %s', async (_name, rule, message, change) => {
    const errors = await lintVariant(change);
    const hits = errors.filter((f) => f.rule === rule);
    expect(hits.map((h) => h.message).join('\n')).toContain(message);
  });

  it('accepts an object closed by unevaluatedProperties: false over allOf branches', async () => {
    const errors = await lintVariant((d) => {
      const { properties, required } = request(d);
      d.components.schemas.PurchaseOrderRequest = {
        type: 'object',
        unevaluatedProperties: false,
        allOf: [{ type: 'object', properties, required }],
      };
    });
    expect(rulesOf(errors)).not.toContain('agent-request-closed');
  });

  it('allows a loopback development server over http', async () => {
    const errors = await lintVariant((d) => {
      d.servers.push({ url: 'http://127.0.0.1:8080', description: 'local development', 'x-internal': true });
    });
    expect(errors).toEqual([]);
  });

  it('applies the agent rules only to operations marked x-agent-facing: true', async () => {
    const errors = await lintVariant((d) => {
      delete op(d)['x-agent-facing'];
      delete request(d).additionalProperties;
      delete op(d).responses['429'];
    });
    expect(rulesOf(errors).filter((r) => r.startsWith('agent-'))).toEqual([]);
  });

  it('still applies the OWASP ruleset to every operation', async () => {
    const errors = await lintVariant((d) => {
      delete op(d)['x-agent-facing'];
      request(d).properties.agent_id = { type: 'string' };
    });
    expect(rulesOf(errors)).toContain('owasp:api4:2023-string-limit');
  });
});
