import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readAcpDocuments } from '../../gateway/agent/acp/schema/files.ts';
import {
  ACP_DIR,
  type AcpDef,
  type AcpViolation,
  acpRequestValidator,
  acpResponseValidator,
  formatJsonPath,
  jsonPathOfPointer,
  type PathSegment,
  parseJsonPath,
} from '../../gateway/agent/acp/schema/index.ts';
import { acpDefValidator } from '../../gateway/agent/acp/schema/validators.ts';
import { formatPointer, pointerSegments } from '../../lib/json/json-path.ts';
import { vendoredChecksums } from '../support/vendored.ts';
import { acpJson, acpJsonFiles, checkoutExample } from './support/examples.ts';
import { describeViolations, expectAcp } from './support/validate.ts';

type Json = Record<string, unknown>;
const params = (vs: readonly AcpViolation[]) => [...new Set(vs.map((v) => v.param))].sort();

describe('the vendored ACP 2026-04-17 files', () => {
  vendoredChecksums(ACP_DIR);
});

/** Which definition each example of examples.agentic_checkout.json is, from its name and shape. */
const CHECKOUT_EXAMPLES: Readonly<
  Record<string, { def: AcpDef; side: 'request' | 'response'; at?: string }>
> = {
  create_checkout_session_request: { def: 'CheckoutSessionCreateRequest', side: 'request' },
  create_checkout_session_request_with_first_touch_attribution: {
    def: 'CheckoutSessionCreateRequest',
    side: 'request',
  },
  create_checkout_session_response: { def: 'CheckoutSession', side: 'response' },
  update_checkout_session_request: { def: 'CheckoutSessionUpdateRequest', side: 'request' },
  update_checkout_session_response: { def: 'CheckoutSession', side: 'response' },
  complete_checkout_session_request: { def: 'CheckoutSessionCompleteRequest', side: 'request' },
  complete_checkout_session_request_seller_backed: { def: 'CheckoutSessionCompleteRequest', side: 'request' },
  complete_checkout_session_request_with_last_touch_attribution: {
    def: 'CheckoutSessionCompleteRequest',
    side: 'request',
  },
  complete_checkout_session_response: { def: 'CheckoutSessionWithOrder', side: 'response' },
  get_checkout_session_response: { def: 'CheckoutSession', side: 'response' },
  cancel_checkout_session_request: { def: 'CancelSessionRequest', side: 'request' },
  cancel_checkout_session_request_timing_deferred: { def: 'CancelSessionRequest', side: 'request' },
  cancel_checkout_session_response: { def: 'CheckoutSession', side: 'response' },
  // The webhook's body is openapi.agentic_checkout_webhook.yaml's WebhookEvent {type, data};
  // its data (EventDataOrder) is the Order, which the bundle has.
  webhook_order_create_event: { def: 'Order', side: 'request', at: 'data' },
  webhook_order_update_event: { def: 'Order', side: 'request', at: 'data' },
  checkout_session_authentication_required: { def: 'CheckoutSession', side: 'response' },
  complete_session_with_authentication_result_request: {
    def: 'CheckoutSessionCompleteRequest',
    side: 'request',
  },
  authentication_result_example: { def: 'AuthenticationResult', side: 'request' },
  error_400_requires_3ds: { def: 'Error', side: 'response' },
  authentication_result_denied_example: { def: 'AuthenticationResult', side: 'request' },
  authentication_result_frictionless_example: { def: 'AuthenticationResult', side: 'request' },
  complete_session_with_denied_authentication_request: {
    def: 'CheckoutSessionCompleteRequest',
    side: 'request',
  },
  error_400_invalid_item: { def: 'Error', side: 'response' },
  checkout_session_with_out_of_stock: { def: 'CheckoutSession', side: 'response' },
  checkout_session_with_payment_declined: { def: 'CheckoutSession', side: 'response' },
  discovery_response_full: { def: 'DiscoveryResponse', side: 'response' },
  discovery_response_minimal: { def: 'DiscoveryResponse', side: 'response' },
  error_400_idempotency_key_required: { def: 'Error', side: 'response' },
  error_422_idempotency_conflict: { def: 'Error', side: 'response' },
  error_409_idempotency_in_flight: { def: 'Error', side: 'response' },
};

/** Examples the released bundle itself refuses: where, and why (the README's quirks). */
const REFUSED_CHECKOUT_EXAMPLES: Readonly<Record<string, { params: string[]; why: string }>> = {
  authentication_result_denied_example: {
    params: ['$.outcome_details.electronic_commerce_indicator', '$.outcome_details.three_ds_cryptogram'],
    why:
      'outcome_details, when present, requires all four fields; a denied 3DS result has no cryptogram ' +
      'or ECI. complete_session_with_denied_authentication_request sends {outcome: "denied"} alone, which is valid.',
  },
  webhook_order_create_event: {
    params: ['$.id', '$.refunds'],
    why: 'data has no id (Order requires it) and the legacy refunds[] the webhook document says was removed',
  },
  webhook_order_update_event: {
    params: ['$.id', '$.refunds'],
    why: 'data has no id (Order requires it) and the legacy refunds[] the webhook document says was removed',
  },
};

describe('the examples of examples.agentic_checkout.json', () => {
  const examples = acpJson<Record<string, Json>>('examples/examples.agentic_checkout.json');

  it('are each assigned a definition', () => {
    expect(Object.keys(examples).sort()).toEqual(Object.keys(CHECKOUT_EXAMPLES).sort());
  });

  const accepted = Object.entries(CHECKOUT_EXAMPLES).filter(([name]) => !REFUSED_CHECKOUT_EXAMPLES[name]);
  it.each(accepted)('%s is a valid %o', (name, { def, side, at }) => {
    const example = examples[name] as Json;
    const value = at ? example[at] : example;
    expectAcp(def, value, side);
    // The one request extension is Item.quantity; these examples validate without it too.
    expectAcp(def, value, 'response');
  });

  it.each(Object.entries(REFUSED_CHECKOUT_EXAMPLES))(
    '%s is refused by the bundle itself',
    (name, refusal) => {
      const { def, side, at } = CHECKOUT_EXAMPLES[name] ?? { def: 'Error', side: 'response' };
      const validate = side === 'request' ? acpRequestValidator(def) : acpResponseValidator(def);
      const example = examples[name] as Json;
      expect(params(validate(at ? example[at] : example)), refusal.why).toEqual(refusal.params);
    },
  );
});

describe('the discount-extension examples', () => {
  const files = acpJsonFiles('examples/discount-extension');

  it('are the five released', () => {
    expect(files).toHaveLength(5);
  });

  // Every one was written before capabilities became required in create requests and before
  // capabilities.payment_methods became capabilities.payment.handlers: the bundle refuses
  // both halves for exactly that, and nothing else.
  it.each(files)('%s: the request is a create request but for the missing capabilities', (file) => {
    const { request } = acpJson<{ request: Json }>(`examples/discount-extension/${file}`);
    const validate = acpRequestValidator('CheckoutSessionCreateRequest');
    expect(params(validate(request))).toEqual(['$.capabilities']);
    expectAcp('CheckoutSessionCreateRequest', { ...request, capabilities: {} }, 'request');
  });

  it.each(files)('%s: the response is a CheckoutSession but for capabilities.payment_methods', (file) => {
    const { response } = acpJson<{ response: Json & { capabilities: Json } }>(
      `examples/discount-extension/${file}`,
    );
    expect(params(acpResponseValidator('CheckoutSession')(response))).toEqual([
      '$.capabilities.payment_methods',
    ]);
    const { payment_methods: _stale, ...capabilities } = response.capabilities;
    expectAcp('CheckoutSession', { ...response, capabilities });
  });
});

describe('the order examples', () => {
  it.each(acpJsonFiles('examples/orders'))('%s is a valid Order', (file) => {
    // $schema and _description annotate the example file; they are not Order fields.
    const { $schema: _schema, _description: _note, ...order } = acpJson<Json>(`examples/orders/${file}`);
    expectAcp('Order', order);
  });
});

/** The MCP binding's examples: the ACP body is the tool call's payload, the result, or the error's data. */
const MCP_EXAMPLES: Readonly<Record<string, { def: AcpDef; side: 'request' | 'response' } | null>> = {
  create_checkout_session_request: { def: 'CheckoutSessionCreateRequest', side: 'request' },
  create_checkout_session_response: { def: 'CheckoutSession', side: 'response' },
  get_checkout_session_request: null, // an id, no body
  get_checkout_session_response: { def: 'CheckoutSession', side: 'response' },
  update_checkout_session_request: { def: 'CheckoutSessionUpdateRequest', side: 'request' },
  update_checkout_session_response: { def: 'CheckoutSession', side: 'response' },
  complete_checkout_session_request: { def: 'CheckoutSessionCompleteRequest', side: 'request' },
  complete_checkout_session_response: { def: 'CheckoutSessionWithOrder', side: 'response' },
  cancel_checkout_session_request: { def: 'CancelSessionRequest', side: 'request' },
  cancel_checkout_session_response: { def: 'CheckoutSession', side: 'response' },
  error_invalid_request: { def: 'Error', side: 'response' },
  error_payment_declined: { def: 'Error', side: 'response' },
};

const REFUSED_MCP_EXAMPLES: Readonly<Record<string, { params: string[]; why: string }>> = {
  create_checkout_session_response: {
    params: ['$.links[0].type'],
    why: 'link type "terms_of_service" is not in Link.type\'s enum (terms_of_use)',
  },
  get_checkout_session_response: {
    params: ['$.fulfillment_options'],
    why: 'fulfillment_options is required',
  },
  update_checkout_session_response: {
    params: ['$.fulfillment_options'],
    why: 'fulfillment_options is required',
  },
  complete_checkout_session_response: {
    params: ['$.fulfillment_options'],
    why: 'fulfillment_options is required',
  },
  cancel_checkout_session_response: {
    params: ['$.fulfillment_options'],
    why: 'fulfillment_options is required',
  },
  update_checkout_session_request: {
    params: [
      '$.selected_fulfillment_options[0].item_ids',
      '$.selected_fulfillment_options[0].option_id',
      '$.selected_fulfillment_options[0].shipping',
    ],
    why: 'SelectedFulfillmentOption is flat {type, option_id, item_ids}, not {type, shipping: {…}}',
  },
  complete_checkout_session_request: {
    params: ['$.payment_data.instrument.credential', '$.payment_data.instrument.type'],
    why: 'PaymentData.instrument is {type, credential: {type, token}}, not {token}',
  },
};

describe('the MCP examples', () => {
  const examples = acpJson<Record<string, Json>>('examples/examples.mcp.agentic_checkout.json');
  const body = (m: Json): unknown => {
    const call = m.params as { arguments?: { payload?: unknown } } | undefined;
    return call?.arguments?.payload ?? m.result ?? (m.error as { data?: unknown } | undefined)?.data;
  };

  it('are each assigned a definition', () => {
    expect(Object.keys(examples).sort()).toEqual(Object.keys(MCP_EXAMPLES).sort());
  });

  it.each(Object.entries(MCP_EXAMPLES).filter(([, d]) => d !== null))('%s: %o', (name, d) => {
    if (!d) return;
    const refusal = REFUSED_MCP_EXAMPLES[name];
    const validate = d.side === 'request' ? acpRequestValidator(d.def) : acpResponseValidator(d.def);
    expect(params(validate(body(examples[name] as Json))), refusal?.why).toEqual(refusal?.params ?? []);
  });
});

describe('quirks fixed in the loaded copy', () => {
  const session = () => checkoutExample('create_checkout_session_response') as Json & { capabilities: Json };
  const create = () => checkoutExample('create_checkout_session_request') as Json & { capabilities: Json };

  it('the released Capabilities.extensions refuses an empty array (oneOf matches both branches)', () => {
    const { checkout } = readAcpDocuments();
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema(checkout);
    const capabilities = ajv.getSchema(`${checkout.$id}#/$defs/Capabilities`);
    expect(capabilities?.({ extensions: [] })).toBe(false);
    expect(capabilities?.errors?.[0]?.keyword).toBe('oneOf');
  });

  it('accepts extensions: [] in requests and responses', () => {
    expectAcp('CheckoutSessionCreateRequest', { ...create(), capabilities: { extensions: [] } }, 'request');
    expectAcp('CheckoutSession', {
      ...session(),
      capabilities: { ...session().capabilities, extensions: [] },
    });
  });

  it('still tells identifiers from declarations, and refuses a mix', () => {
    const withExtensions = (extensions: unknown) => ({ ...create(), capabilities: { extensions } });
    expectAcp('CheckoutSessionCreateRequest', withExtensions(['discount']), 'request');
    expectAcp('CheckoutSessionCreateRequest', withExtensions([{ name: 'discount' }]), 'request');
    const mixed = acpRequestValidator('CheckoutSessionCreateRequest')(
      withExtensions(['discount', { name: 'x' }]),
    );
    expect(params(mixed)).toContain('$.capabilities.extensions');
  });

  it('compiles every definition of the three schema files on both sides (cross-file refs resolve)', () => {
    const docs = readAcpDocuments();
    for (const doc of [docs.checkout, docs.discount, docs.extension]) {
      for (const name of Object.keys(doc.$defs)) {
        for (const side of ['request', 'response'] as const) {
          expect(() => acpDefValidator(side, name, doc.$id), `${doc.$id}#${name}`).not.toThrow();
        }
      }
    }
  });

  it('judges a discount-extension checkout by the bundle it extends', () => {
    const discount = readAcpDocuments().discount.$id;
    const validate = acpDefValidator('response', 'checkout_with_discount', discount);
    expect(validate(session())).toEqual([]);
    expect(params(validate({ ...session(), status: 'lost' }))).toEqual(['$.status']);
  });
});

describe('request validation', () => {
  const create = () => checkoutExample('create_checkout_session_request') as Json;
  const withQuantity = (quantity: unknown) => ({ ...create(), line_items: [{ id: 'item_123', quantity }] });
  const validate = acpRequestValidator('CheckoutSessionCreateRequest');

  it.each([2, 1, 10_000])('accepts line_items[0].quantity %s', (quantity) => {
    expect(validate(withQuantity(quantity))).toEqual([]);
  });

  it.each([
    [1.5, 'must be integer'],
    [0, 'must be >= 1'],
    [-1, 'must be >= 1'],
    [10_001, 'must be <= 10000'],
    ['2', 'must be integer'],
    [null, 'must be integer'],
  ])('refuses line_items[0].quantity %o at $.line_items[0].quantity: %s', (quantity, message) => {
    expect(validate(withQuantity(quantity))).toEqual([
      { param: '$.line_items[0].quantity', message, keyword: expect.any(String) },
    ]);
  });

  // Ajv checks the type first and skips the number keywords of a value of the wrong type (and
  // strict mode's strictNumbers makes Infinity no integer), so the violation is the type alone.
  it('refuses 1e400, which JSON.parse reads as Infinity, as not an integer', () => {
    const request = JSON.parse(
      '{"currency":"usd","capabilities":{},"line_items":[{"id":"i","quantity":1e400}]}',
    );
    expect(request.line_items[0].quantity).toBe(Number.POSITIVE_INFINITY);
    expect(validate(request)).toEqual([
      { param: '$.line_items[0].quantity', message: 'must be integer', keyword: 'type' },
    ]);
  });

  it('refuses quantity in a response item (the released Item has none)', () => {
    const responseSide = acpResponseValidator('CheckoutSessionCreateRequest')(withQuantity(2));
    expect(responseSide).toEqual([
      { param: '$.line_items[0].quantity', message: 'is not allowed', keyword: 'additionalProperties' },
    ]);
    const line = (checkoutExample('create_checkout_session_response').line_items as Json[])[0] as Json;
    expect(
      params(acpResponseValidator('LineItem')({ ...line, item: { id: 'item_123', quantity: 2 } })),
    ).toEqual(['$.item.quantity']);
  });

  it('names a missing required field and an unknown one by their own path', () => {
    const { currency: _c, ...noCurrency } = create();
    expect(validate({ ...noCurrency, 'odd key': 1 })).toEqual([
      { param: '$.currency', message: 'is required', keyword: 'required' },
      { param: "$['odd key']", message: 'is not allowed', keyword: 'additionalProperties' },
    ]);
  });

  it('checks formats: email and date-time', () => {
    const complete = checkoutExample('complete_checkout_session_request') as Json & { buyer: Json };
    const result = acpRequestValidator('CheckoutSessionCompleteRequest')({
      ...complete,
      buyer: { ...complete.buyer, email: 'not an address' },
    });
    expect(result).toEqual([
      { param: '$.buyer.email', message: 'must match format "email"', keyword: 'format' },
    ]);
  });
});

describe('response validation', () => {
  const session = () => checkoutExample('create_checkout_session_response') as Json;
  const validate = acpResponseValidator('CheckoutSession');

  it('refuses an unknown field of a CheckoutSession at its JSONPath', () => {
    expect(validate({ ...session(), surprise: true })).toEqual([
      { param: '$.surprise', message: 'is not allowed', keyword: 'additionalProperties' },
    ]);
    const lines = session().line_items as Json[];
    const odd = { ...session(), line_items: [{ ...lines[0], "it's": 1 }] };
    expect(params(validate(odd))).toEqual(["$.line_items[0]['it\\'s']"]);
  });

  it('checks date-time', () => {
    expect(validate({ ...session(), created_at: 'yesterday' })).toEqual([
      { param: '$.created_at', message: 'must match format "date-time"', keyword: 'format' },
    ]);
  });

  it('reports an enum with its values', () => {
    const [v] = acpResponseValidator('Error')({ type: 'oops', code: 'c', message: 'm' });
    expect(v).toEqual({
      param: '$.type',
      message: 'must be one of "invalid_request", "processing_error", "service_unavailable"',
      keyword: 'enum',
    });
  });

  it('expectAcp lists the violations it throws for', () => {
    expect(() => expectAcp('Error', { type: 'invalid_request' })).toThrow(
      /not a valid ACP Error \(response\): 2 violation\(s\)\n {2}\$\.code: is required \(required\)\n {2}\$\.message: is required/,
    );
    expect(describeViolations([])).toBe('');
  });
});

describe('JSON pointer → RFC 9535 JSONPath', () => {
  const table: [pointer: string, document: unknown, path: string][] = [
    ['', {}, '$'],
    ['/line_items/0/quantity', { line_items: [{ quantity: 1 }] }, '$.line_items[0].quantity'],
    ['/items/10', { items: Array.from({ length: 11 }) }, '$.items[10]'],
    ['/0', { 0: 'a member named 0' }, "$['0']"],
    ['/missing/0', {}, "$.missing['0']"],
    ['/odd key', {}, "$['odd key']"],
    ['/_private', {}, '$._private'],
    ['/CamelCase9', {}, '$.CamelCase9'],
    ['/9lives', {}, "$['9lives']"],
    ['/a-b', {}, "$['a-b']"],
    ['/', {}, "$['']"],
    ['/a~1b', {}, "$['a/b']"],
    ['/m~0n', {}, "$['m~n']"],
    ['/~01', {}, "$['~1']"],
    ["/it's", {}, "$['it\\'s']"],
    ['/back\\slash', {}, "$['back\\\\slash']"],
    ['/line\nbreak\ttab', {}, "$['line\\nbreak\\ttab']"],
    ['/\u0000\u001f\b\f\r', {}, "$['\\u0000\\u001f\\b\\f\\r']"],
    ['/"quoted"', {}, `$['"quoted"']`],
    ['/é', {}, "$['é']"],
    ['/\u007f', {}, "$['\u007f']"],
  ];

  it.each(table)('%j in %j is %s', (pointer, document, path) => {
    expect(jsonPathOfPointer(pointer, document)).toBe(path);
    expect(parseJsonPath(path)).toEqual(pointerSegments(pointer, document));
  });

  it.each([
    '',
    'a',
    '$.',
    '$[01]',
    '$[-1]',
    "$['open",
    "$['bad\\q']",
    '$["double"]',
    '$.*',
    '$..a',
    '$[?@.a]',
  ])('refuses to parse %j', (path) => {
    expect(() => parseJsonPath(path)).toThrow(SyntaxError);
  });

  it('refuses a pointer that does not start with /', () => {
    expect(() => jsonPathOfPointer('a/b', {})).toThrow(SyntaxError);
  });

  const tricky = fc.constantFrom(
    "'",
    '\\',
    '/',
    '~',
    '~0',
    '~1',
    '\n',
    '\u0000',
    '\u001f',
    ' ',
    '.',
    '[',
    ']',
    '$',
    'é',
    '😀',
  );
  const name = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/),
    fc.array(fc.oneof(tricky, fc.string({ maxLength: 2 })), { maxLength: 6 }).map((parts) => parts.join('')),
  );
  const segment: fc.Arbitrary<PathSegment> = fc.oneof(fc.nat(12), name);

  /** The smallest document in which every segment exists: arrays for indices, objects for names. */
  const documentFor = (segments: readonly PathSegment[]): unknown =>
    segments.reduceRight<unknown>((inner, s) => {
      if (typeof s === 'number') return Array.from({ length: s + 1 }, (_, i) => (i === s ? inner : null));
      return { [s]: inner };
    }, 'leaf');

  it('round-trips every path: segments → pointer → JSONPath → segments', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), (segments) => {
        const document = documentFor(segments);
        const path = jsonPathOfPointer(formatPointer(segments), document);
        expect(path).toBe(formatJsonPath(segments));
        expect(parseJsonPath(path)).toEqual(segments);
      }),
      { numRuns: 2000 },
    );
  });
});
