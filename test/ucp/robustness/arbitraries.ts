/**
 * The inputs test/ucp/robustness.test.ts draws (fast-check): header strings, and structured and
 * plausible bodies for create, update and complete, over the UCP checkout suite's fixture.
 */
import fc from 'fast-check';
import { FIXTURE } from '../checkout.suite.ts';

/** Printable ASCII, what a header value can carry through fetch (it refuses CR, LF, NUL, non-Latin-1). */
export const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 200,
});

const item = fc.oneof(
  fc.constantFrom(FIXTURE.itemA, FIXTURE.itemB, FIXTURE.unknown, FIXTURE.unknownSku),
  fc.string(),
);
const quantity = fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.double(), fc.string(), fc.constant(null));
const lineItems = fc.array(
  fc.record(
    {
      item: fc.oneof(fc.record({ id: item }, { requiredKeys: [] }), fc.jsonValue()),
      quantity,
      id: fc.oneof(fc.constantFrom('li_0', 'li_1'), fc.string()),
    },
    { requiredKeys: [] },
  ),
  { maxLength: 5 },
);
const address = fc.oneof(
  fc.constant(FIXTURE.address),
  fc.record(
    {
      street_address: fc.string(),
      address_country: fc.oneof(fc.constantFrom('US', 'us', 'XX', ''), fc.string()),
      postal_code: fc.oneof(fc.string(), fc.integer()),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const fulfillment = fc.record(
  {
    methods: fc.array(
      fc.record(
        {
          type: fc.oneof(fc.constantFrom('shipping', 'pickup'), fc.string()),
          destinations: fc.array(address, { maxLength: 3 }),
          line_item_ids: fc.array(fc.oneof(fc.constantFrom('li_0', 'li_9'), fc.string()), { maxLength: 3 }),
          groups: fc.array(
            fc.record(
              {
                id: fc.oneof(fc.constant('group_1'), fc.string()),
                selected_option_id: fc.oneof(fc.constant('procurement_delivery'), fc.string()),
              },
              { requiredKeys: [] },
            ),
            { maxLength: 2 },
          ),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: [] },
);
export const checkoutBody = fc.record(
  {
    line_items: lineItems,
    fulfillment: fc.oneof(fulfillment, fc.jsonValue()),
    buyer: fc.oneof(
      fc.record({ email: fc.string(), first_name: fc.string() }, { requiredKeys: [] }),
      fc.jsonValue(),
    ),
    discounts: fc.oneof(
      fc.record({
        codes: fc.array(fc.oneof(fc.constantFrom(FIXTURE.code1, FIXTURE.code2), fc.string()), {
          maxLength: 12,
        }),
      }),
      fc.jsonValue(),
    ),
    currency: fc.oneof(fc.constantFrom('USD', 'usd', 'EUR'), fc.string()),
  },
  { requiredKeys: [] },
);
export const completeBody = fc.record(
  {
    payment: fc.oneof(
      fc.record(
        {
          instruments: fc.array(
            fc.record(
              {
                id: fc.string(),
                handler_id: fc.oneof(fc.constant('purchase_order'), fc.string()),
                type: fc.oneof(fc.constant('purchase_order'), fc.string()),
                selected: fc.oneof(fc.boolean(), fc.jsonValue()),
                credential: fc.oneof(
                  fc.record(
                    {
                      type: fc.oneof(fc.constant('purchase_order'), fc.string()),
                      purchase_order_number: fc.oneof(fc.string(), fc.integer()),
                    },
                    { requiredKeys: [] },
                  ),
                  fc.jsonValue(),
                ),
              },
              { requiredKeys: [] },
            ),
            { maxLength: 3 },
          ),
        },
        { requiredKeys: [] },
      ),
      fc.jsonValue(),
    ),
  },
  { requiredKeys: [] },
);
/** A body the operation may well accept: known items, sane quantities, codes from the fixture or not. */
export const plausibleBody = fc.record(
  {
    line_items: fc.array(
      fc.record({
        item: fc.record({ id: fc.constantFrom(FIXTURE.itemA, FIXTURE.itemB, FIXTURE.unknownSku) }),
        quantity: fc.integer({ min: 0, max: 1000 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    discounts: fc.record({ codes: fc.subarray([FIXTURE.code1, FIXTURE.code2, 'NOPE']) }),
  },
  { requiredKeys: ['line_items'] },
);

/** A body: any JSON text, a structured one, or a few bytes that are not JSON at all. */
export const bodyOf = <T>(structured: fc.Arbitrary<T>) =>
  fc.oneof(
    fc.json(),
    structured.map((b) => JSON.stringify(b)),
    fc.string({ maxLength: 40 }),
  );

export const checkoutBodies = fc.oneof(
  bodyOf(checkoutBody),
  plausibleBody.map((b) => JSON.stringify(b)),
);
