import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  UCP_DEFS,
  UCP_DIR,
  UCP_OPERATIONS,
  UCP_VERSION,
  type UcpDef,
  type UcpViolation,
  ucpCatalogValidator,
  ucpValidator,
} from '../../gateway/agent/ucp/schema/index.ts';
import { referenceAliases } from '../../gateway/agent/ucp/schema/quirks.ts';
import { ucpAjv, ucpDocuments, ucpSchemaValidator } from '../../gateway/agent/ucp/schema/validators.ts';
import { documentView, type UcpView } from '../../gateway/agent/ucp/schema/views.ts';
import { vendoredChecksums } from '../support/vendored.ts';
import { classifySpecBlock, type SpecExample, specBlocks, UCP_SPEC_PAGES } from './support/spec-examples.ts';
import { expectUcp } from './support/validate.ts';

type Json = Record<string, unknown>;
const params = (vs: readonly UcpViolation[]) => [...new Set(vs.map((v) => v.param))].sort();
const VIEWS: readonly UcpView[] = ['response', ...UCP_OPERATIONS];

describe(`the vendored UCP v${UCP_VERSION} files`, () => {
  vendoredChecksums(UCP_DIR);

  it('holds the 78 files of source/schemas and the discovery profile schema', () => {
    const paths = ucpDocuments().map((d) => d.path);
    expect(paths.filter((p) => p.startsWith('schemas/'))).toHaveLength(78);
    expect(paths.filter((p) => p.startsWith('discovery/'))).toEqual(['discovery/profile_schema.json']);
  });
});

/** `$defs` entries keyed by a capability name hold its profile variants, not a schema. */
const isVariantContainer = (def: unknown): def is Json =>
  typeof def === 'object' &&
  def !== null &&
  Object.keys(def).length > 0 &&
  Object.keys(def).every((k) => k === 'platform_schema' || k === 'business_schema');

describe('every schema compiles', () => {
  const targets = ucpDocuments().flatMap(({ path, schema }) => {
    const defs = Object.entries((schema.$defs ?? {}) as Json).flatMap(([name, def]) =>
      isVariantContainer(def)
        ? Object.keys(def).map((variant) => `${schema.$id}#/$defs/${name}/${variant}`)
        : [`${schema.$id}#/$defs/${name}`],
    );
    return [schema.$id, ...defs].map((uri) => ({ path, uri }));
  });

  it.each(VIEWS)('in the %s view: every file and every $defs entry', (view) => {
    const ajv = ucpAjv(view);
    const failed = targets.filter(({ uri }) => {
      try {
        return typeof ajv.getSchema(uri) !== 'function';
      } catch {
        return true;
      }
    });
    expect(failed).toEqual([]);
    expect(targets).toHaveLength(148); // 79 files and their 69 $defs entries or variants
  });

  it.each(VIEWS)('in the %s view: every UcpDef', (view) => {
    for (const def of Object.keys(UCP_DEFS) as UcpDef[]) {
      expect(typeof ucpSchemaValidator(view, UCP_DEFS[def], def)).toBe('function');
    }
  });

  it('refuses a UCP annotation with a value the authoring guide does not allow', () => {
    const ajv = ucpAjv('response');
    expect(() => ajv.compile({ type: 'object', properties: { a: { ucp_request: 'hidden' } } })).toThrow(
      /ucp_request/,
    );
    expect(() => ajv.compile({ properties: { a: { ucp_request: { delete: 'omit' } } } })).toThrow(
      /ucp_request/,
    );
    expect(() => ajv.compile({ properties: { a: { ucp_response: 'required' } } })).toThrow(/ucp_response/);
  });

  it('registers the one reference that misses by $id (profile_schema.json → ucp.json) under its alias', () => {
    expect(referenceAliases(ucpDocuments()).map((a) => [a.uri, a.document.path])).toEqual([
      ['https://ucp.dev/schemas/schemas/ucp.json', 'schemas/ucp.json'],
    ]);
  });
});

describe('the request views (ucp_request, as the tag’s generator resolves it)', () => {
  const checkout = ucpDocuments().find((d) => d.path === 'schemas/shopping/checkout.json');
  if (!checkout) throw new Error('no checkout.json');
  const props = (view: UcpView) => Object.keys(documentView(checkout, view).schema.properties as Json).sort();
  const required = (view: UcpView) =>
    [...((documentView(checkout, view).schema.required as string[]) ?? [])].sort();

  it('leaves the released document untouched', () => {
    const before = JSON.stringify(checkout.schema);
    for (const view of VIEWS) documentView(checkout, view);
    expect(JSON.stringify(checkout.schema)).toBe(before);
  });

  it.each([
    ['response', ['id', 'currency', 'line_items', 'links', 'status', 'totals', 'ucp']],
    ['create', ['line_items']],
    ['update', ['line_items']],
    ['complete', ['payment']],
  ] as const)('%s requires %o', (view, fields) => {
    expect(required(view)).toEqual([...fields].sort());
  });

  it('drops the fields a request never carries (ucp, id, status, currency, totals, messages, links, …)', () => {
    expect(props('create')).toEqual(
      ['attribution', 'buyer', 'context', 'line_items', 'payment', 'signals'].sort(),
    );
    expect(props('complete')).toEqual(['attribution', 'payment', 'signals']);
  });

  it('validates a create request without any server-owned field', () => {
    expectUcp(
      'checkout',
      { line_items: [{ item: { id: 'bouquet_roses' }, quantity: 1 }] },
      { request: 'create' },
    );
    expect(params(ucpValidator('checkout', 'request', 'create')({}))).toEqual(['$.line_items']);
  });

  it('validates a complete request of a payment alone, and refuses one without', () => {
    const payment = {
      instruments: [
        {
          id: 'instr_1',
          handler_id: 'on_account',
          type: 'on_account',
          selected: true,
          credential: { type: 'on_account' },
        },
      ],
    };
    expectUcp('checkout', { payment }, { request: 'complete' });
    expect(params(ucpValidator('checkout', 'request', 'complete')({}))).toEqual(['$.payment']);
  });

  it('has line_items[].item as {id} in requests (title and price are the business’s)', () => {
    const validate = ucpValidator('checkout', 'request', 'update');
    expect(validate({ line_items: [{ item: { id: 'pot_ceramic' }, quantity: 2 }] })).toEqual([]);
    expect(params(validate({ line_items: [{ item: {}, quantity: 2 }] }))).toEqual([
      '$.line_items[0].item.id',
    ]);
  });
});

/** Examples the tag itself refuses: where, and why (the README's quirks). */
const REFUSED_SPEC_EXAMPLES: Readonly<Record<string, { params: string[]; why: string }>> = {
  'checkout.md:305': {
    params: ['$.currency', '$.line_items[0]', '$.links', '$.totals[0]', '$.ucp.payment_handlers'],
    why: 'an elided illustration of an eligibility error: line_items and totals are ["..."], no currency, links or payment_handlers',
  },
  'checkout.md:412': {
    params: ['$.line_items[0].item.price', '$.totals', '$.totals[0].type', '$.ucp.payment_handlers'],
    why:
      'a whole response otherwise: the item has no price, totals has a total but no subtotal (totals.json wants ' +
      'exactly one of each), and ucp has no payment_handlers (response_checkout_schema requires them)',
  },
  'order-rest.md:28': {
    params: ['$.ucp.payment_handlers'],
    why: 'a business profile cut down to the order capability: business_schema requires payment_handlers',
  },
  'order-mcp.md:29': {
    params: ['$.ucp.payment_handlers'],
    why: 'a business profile cut down to the order capability: business_schema requires payment_handlers',
  },
  'catalog/rest.md:29': {
    params: ['$.ucp.payment_handlers'],
    why: 'a business profile cut down to the catalog capabilities: business_schema requires payment_handlers',
  },
  'catalog/mcp.md:29': {
    params: ['$.ucp.payment_handlers'],
    why: 'a business profile cut down to the catalog capabilities: business_schema requires payment_handlers',
  },
  'catalog/rest.md:222': {
    params: ['$.products[1].variants[0].description'],
    why: "the lookup of two variants elides the second variant's description (variant.json requires one)",
  },
  'catalog/rest.md:300': {
    params: [
      '$.products[0].description',
      '$.products[0].variants',
      '$.products[1].description',
      '$.products[1].variants',
    ],
    why: 'a partial lookup shows each product by title and price range only (product.json requires description and variants)',
  },
  'catalog/mcp.md:400': {
    params: ['$.products[0].description', '$.products[0].variants'],
    why: 'the MCP lookup shows its product without description and with no variant (product.json requires a description and at least one variant)',
  },
  'overview.md:1370': {
    params: [
      '$.payment.instruments[0].credential.type',
      '$.payment.instruments[0].id',
      '$.payment.instruments[0].type',
    ],
    why: 'the AP2 complete request elides the instrument ("// other required instruments fields")',
  },
};

/** How many blocks of the pages are judged against each shape (a changed page shows here). */
const JUDGED: Readonly<Record<string, number>> = {
  'checkout create request': 2,
  'checkout update request': 3,
  'checkout complete request': 3,
  checkout_with_discount_and_fulfillment: 11,
  order: 3,
  error_response: 15,
  business_profile: 6,
  platform_profile: 1,
  discounts: 9,
  fulfillment: 5,
  signing_key: 1,
  order_platform_config: 1,
  catalog_search_request: 3,
  catalog_search_response: 2,
  catalog_lookup_request: 3,
  catalog_lookup_response: 6,
  catalog_get_product_request: 2,
  catalog_get_product_response: 2,
};

describe('the JSON examples of the vendored spec pages', () => {
  const blocks = UCP_SPEC_PAGES.flatMap((page) => specBlocks(page));
  const classified = blocks.map(classifySpecBlock);
  const judged = classified.filter((c): c is SpecExample => 'def' in c);
  const kind = (e: SpecExample) =>
    e.side === 'request' && e.operation ? `${e.def} ${e.operation} request` : e.def;
  const validatorOf = (e: SpecExample) =>
    e.def.startsWith('catalog_')
      ? ucpCatalogValidator(e.def)
      : e.side === 'request' && e.operation
        ? ucpValidator(e.def, 'request', e.operation)
        : ucpValidator(e.def, 'response');

  it('are judged against the shapes of JUDGED; every other block is a fragment, not JSON, or has no body', () => {
    const counts: Record<string, number> = {};
    for (const e of judged) counts[kind(e)] = (counts[kind(e)] ?? 0) + 1;
    expect(counts).toEqual(JUDGED);
    for (const c of classified) {
      if ('why' in c)
        expect(c.why).toMatch(
          /^(not JSON|fragment|REST request without|JSON-RPC|body: not a whole|REST response: not a whole)/,
        );
    }
  });

  const accepted = judged.filter((e) => !REFUSED_SPEC_EXAMPLES[e.at]);
  it.each(accepted.map((e) => [e.at, kind(e), e] as const))('%s is a valid %s', (_at, _kind, e) => {
    expect(validatorOf(e)(e.value)).toEqual([]);
  });

  it.each(Object.entries(REFUSED_SPEC_EXAMPLES))('%s is refused by the tag itself', (at, refusal) => {
    const e = judged.find((j) => j.at === at);
    if (!e) throw new Error(`${at} is not judged`);
    expect(params(validatorOf(e)(e.value)), refusal.why).toEqual(refusal.params);
  });
});

/** A whole checkout response (checkout-rest.md's create response, in the flower shop's terms). */
function checkoutResponse(): Json {
  return {
    ucp: {
      version: UCP_VERSION,
      capabilities: { 'dev.ucp.shopping.checkout': [{ version: UCP_VERSION }] },
      payment_handlers: { 'com.example.on_account': [{ id: 'on_account', version: UCP_VERSION }] },
    },
    id: 'chk_1',
    status: 'incomplete',
    currency: 'USD',
    line_items: [
      {
        id: 'li_1',
        item: { id: 'bouquet_roses', title: 'Bouquet of Red Roses', price: 3500 },
        quantity: 2,
        totals: [
          { type: 'subtotal', amount: 7000 },
          { type: 'total', amount: 7000 },
        ],
      },
    ],
    totals: [
      { type: 'subtotal', amount: 7000 },
      { type: 'total', amount: 7000 },
    ],
    links: [{ type: 'terms_of_service', url: 'https://shop.example/terms' }],
  };
}

describe('the checkout response', () => {
  it('is valid as built', () => {
    expectUcp('checkout', checkoutResponse());
    expectUcp('checkout_with_discount_and_fulfillment', checkoutResponse());
  });

  it('is open: an unknown member is accepted (checkout.json: additionalProperties true)', () => {
    expectUcp('checkout', { ...checkoutResponse(), gift_wrap: true });
  });

  it('refuses an unknown member where the schema is closed (error_response), at its JSONPath', () => {
    const error = {
      ucp: { version: UCP_VERSION, status: 'error' },
      messages: [
        { type: 'error', code: 'out_of_stock', content: 'Gardenias are sold out', severity: 'unrecoverable' },
      ],
    };
    expectUcp('error_response', error);
    expect(ucpValidator('error_response', 'response')({ ...error, 'retry after': 5 })).toEqual([
      { param: "$['retry after']", message: 'is not allowed', keyword: 'additionalProperties' },
    ]);
  });

  it('refuses amounts that are not integers of minor units, each at its JSONPath', () => {
    const value = checkoutResponse() as { totals: Json[]; line_items: { item: Json }[] };
    (value.totals[0] as Json).amount = 70.5;
    (value.line_items[0] as { item: Json }).item.price = '35.00';
    const violations = ucpValidator('checkout', 'response')(value);
    expect(violations).toContainEqual({
      param: '$.totals[0].amount',
      message: 'must be integer',
      keyword: 'type',
    });
    expect(violations).toContainEqual({
      param: '$.line_items[0].item.price',
      message: 'must be integer',
      keyword: 'type',
    });
  });

  it('refuses any non-integer amount (property)', () => {
    const validate = ucpValidator('checkout', 'response');
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
        (amount) => {
          const value = checkoutResponse() as { totals: Json[] };
          (value.totals[1] as Json).amount = amount;
          return params(validate(value)).includes('$.totals[1].amount');
        },
      ),
    );
  });

  it('refuses a negative subtotal (amount.json: minimum 0) but takes a negative discount line', () => {
    const value = checkoutResponse() as { totals: Json[] };
    value.totals.splice(1, 0, { type: 'discount', display_text: 'WELCOME20', amount: -1400 });
    expectUcp('checkout', value);
    (value.totals[0] as Json).amount = -1;
    expect(params(ucpValidator('checkout', 'response')(value))).toContain('$.totals[0].amount');
  });

  it('does not check the currency’s case: checkout.json and order.json say only "ISO 4217" (README: not checked)', () => {
    expectUcp('checkout', { ...checkoutResponse(), currency: 'usd' });
  });

  it('takes applied discounts and fulfillment in the composed checkout', () => {
    const value = {
      ...checkoutResponse(),
      discounts: {
        codes: ['WELCOME20'],
        applied: [{ code: 'WELCOME20', title: '20% Off', amount: 1400 }],
      },
    };
    expectUcp('checkout_with_discount_and_fulfillment', value);
    const bad = { ...value, discounts: { codes: 'WELCOME20' } };
    expect(params(ucpValidator('checkout_with_discount_and_fulfillment', 'response')(bad))).toEqual([
      '$.discounts.codes',
    ]);
  });
});

describe('expectUcp', () => {
  it('throws listing each violation with its JSONPath', () => {
    expect(() => expectUcp('checkout', { ...checkoutResponse(), status: 'open' })).toThrow(
      /not a valid UCP checkout \(response\): 1 violation\(s\)\n {2}\$\.status: must be one of/,
    );
  });
});
