/**
 * The fulfillment extension as this merchant offers it (fulfillment.md): one shipping method
 * for every line, the platform's destinations (postal addresses), and one group with one option,
 * delivery under the buyer's procurement terms at no charge. The session keeps the object
 * exactly as a checkout response shows it (ids assigned, selections made), so order rendering
 * (UCP-B's renderUcpOrder) reads it as the checkout's `fulfillment`. Pure.
 */

export const METHOD_ID = 'shipping_1';
export const GROUP_ID = 'group_1';
export const OPTION_ID = 'procurement_delivery';
export const OPTION_TITLE = 'Delivery under your procurement terms';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const lineItemId = (index: number): string => `li_${index}`;

/** The option list of the one group. */
export const OPTIONS = [{ id: OPTION_ID, title: OPTION_TITLE, totals: [{ type: 'total', amount: 0 }] }];

/**
 * The stored fulfillment after a create or update that sent `requested` (the request's
 * `fulfillment`), over what was stored before. Destinations are replaced when sent (ids kept or
 * given `dest_<n>`); one destination is selected by itself; a selection must name a destination
 * or the option, else it is dropped and reported.
 */
export function nextFulfillment(
  before: Json | null,
  requested: unknown,
  lineCount: number,
): { fulfillment: Json; problems: { path: string; content: string }[] } {
  const problems: { path: string; content: string }[] = [];
  const old = (isObject(before) && Array.isArray(before.methods) ? before.methods[0] : undefined) as
    | Json
    | undefined;
  const sent = (isObject(requested) && Array.isArray(requested.methods) ? requested.methods[0] : undefined) as
    | Json
    | undefined;
  let destinations = (old?.destinations as Json[] | undefined) ?? [];
  let selectedDestination = (old?.selected_destination_id as string | null | undefined) ?? null;
  let selectedOption =
    ((old?.groups as Json[] | undefined)?.[0]?.selected_option_id as string | null | undefined) ?? null;
  if (sent) {
    if (sent.type !== undefined && sent.type !== 'shipping')
      problems.push({ path: '$.fulfillment.methods[0].type', content: 'Only shipping is offered.' });
    if (Array.isArray(sent.destinations)) {
      destinations = sent.destinations.filter(isObject).map((d, i) => ({
        ...d,
        id: typeof d.id === 'string' && d.id !== '' ? d.id : `dest_${i + 1}`,
      }));
      if (!destinations.some((d) => d.id === selectedDestination)) selectedDestination = null;
    }
    if (sent.selected_destination_id !== undefined) {
      const wanted = sent.selected_destination_id;
      if (wanted === null || destinations.some((d) => d.id === wanted))
        selectedDestination = wanted as string | null;
      else
        problems.push({
          path: '$.fulfillment.methods[0].selected_destination_id',
          content: `No destination has the id ${String(wanted).slice(0, 64)}.`,
        });
    }
    const group = (Array.isArray(sent.groups) ? sent.groups.find(isObject) : undefined) as Json | undefined;
    if (group && group.selected_option_id !== undefined) {
      const wanted = group.selected_option_id;
      if (wanted === null || wanted === OPTION_ID) selectedOption = wanted as string | null;
      else
        problems.push({
          path: '$.fulfillment.methods[0].groups[0].selected_option_id',
          content: `No fulfillment option has the id ${String(wanted).slice(0, 64)}; the one option is ${OPTION_ID}.`,
        });
    }
  }
  if (selectedDestination === null && destinations.length === 1)
    selectedDestination = destinations[0]?.id as string;
  const ids = Array.from({ length: lineCount }, (_, i) => lineItemId(i));
  return {
    fulfillment: {
      methods: [
        {
          id: METHOD_ID,
          type: 'shipping',
          line_item_ids: ids,
          destinations,
          selected_destination_id: selectedDestination,
          groups: [
            { id: GROUP_ID, line_item_ids: ids, options: OPTIONS, selected_option_id: selectedOption },
          ],
        },
      ],
    },
    problems,
  };
}

/** The selected destination's address, if any. */
export function selectedDestination(f: Json | null): Json | undefined {
  const m = (isObject(f) && Array.isArray(f.methods) ? f.methods[0] : undefined) as Json | undefined;
  const id = m?.selected_destination_id;
  return (m?.destinations as Json[] | undefined)?.find((d) => d.id === id);
}

/** What still has to be chosen before completion, as messages' paths and contents. */
export function missingSelections(f: Json | null): { path: string; content: string }[] {
  const m = (isObject(f) && Array.isArray(f.methods) ? f.methods[0] : undefined) as Json | undefined;
  const out: { path: string; content: string }[] = [];
  if (!selectedDestination(f))
    out.push({
      path: '$.fulfillment.methods[0].selected_destination_id',
      content: 'A shipping address is required: send fulfillment.methods[0].destinations.',
    });
  if ((m?.groups as Json[] | undefined)?.[0]?.selected_option_id !== OPTION_ID)
    out.push({
      path: '$.fulfillment.methods[0].groups[0].selected_option_id',
      content: `Select the fulfillment option ${OPTION_ID}.`,
    });
  return out;
}

/** The pricing region: the selected address's two-letter country, else the default. */
export function regionOf(f: Json | null, fallback: string): string {
  const c = selectedDestination(f)?.address_country;
  return typeof c === 'string' && /^[A-Za-z]{2}$/.test(c) ? c.toUpperCase() : fallback;
}
