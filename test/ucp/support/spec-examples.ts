import { readFileSync } from 'node:fs';
import {
  UCP_DIR,
  UCP_VERSION,
  type UcpDef,
  type UcpOperation,
} from '../../../gateway/agent/ucp/schema/index.ts';

/** The spec pages vendored beside the schemas (schemas/ucp/v<version>/spec/). */
export const UCP_SPEC_PAGES = [
  'checkout.md',
  'checkout-rest.md',
  'checkout-mcp.md',
  'order.md',
  'order-rest.md',
  'order-mcp.md',
  'discount.md',
  'fulfillment.md',
  'signatures.md',
  'overview.md',
  'catalog/index.md',
  'catalog/search.md',
  'catalog/lookup.md',
  'catalog/rest.md',
  'catalog/mcp.md',
] as const;

/** One fenced ```json block of a spec page. */
export interface SpecBlock {
  /** `checkout-rest.md:79`: the page and the line of the opening fence. */
  readonly at: string;
  /** The HTTP start line when the block is an HTTP message (`POST /checkout-sessions HTTP/1.1`). */
  readonly startLine?: string;
  /** The JSON body, parsed; undefined for an HTTP message without a body. */
  readonly body?: unknown;
  /** Why the block is not JSON (`...` elisions, a fragment such as `"totals": [...]`). */
  readonly notJson?: string;
  /** The block had `//` comments, dropped before parsing. */
  readonly hadComments: boolean;
}

const START_LINE =
  /^(?:(?:GET|POST|PUT|PATCH|DELETE) \S+(?: HTTP\/\d(?:\.\d)?)?|HTTP\/\d(?:\.\d)? \d{3}\b.*)$/;

/** The text without `//` comments outside JSON strings (the pages annotate examples with them). */
export function dropLineComments(text: string): { text: string; dropped: boolean } {
  let out = '';
  let inString = false;
  let dropped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
      dropped = true;
    } else {
      if (c === '"') inString = true;
      out += c;
    }
  }
  return { text: out, dropped };
}

/**
 * A block's text as a message: its start line (if any) and the JSON text after the headers
 * (header lines, then an optional blank line; one page puts the body right after the start line).
 */
function splitMessage(text: string): { startLine?: string; json: string } {
  const lines = text.split('\n');
  const first = lines.findIndex((l) => l.trim() !== '');
  const start = lines[first]?.trim() ?? '';
  if (!START_LINE.test(start)) return { json: text };
  let i = first + 1;
  while (i < lines.length && /^[A-Za-z0-9-]+:\s/.test(lines[i] as string)) i++;
  return { startLine: start, json: lines.slice(i).join('\n') };
}

/** Every fenced ```json block of a vendored spec page, in page order. */
export function specBlocks(page: string): SpecBlock[] {
  const lines = readFileSync(new URL(`spec/${page}`, UCP_DIR), 'utf8').split('\n');
  const blocks: SpecBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```json\s*$/.exec(lines[i] as string);
    if (!open) continue;
    const indent = (open[1] as string).length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j] as string); j++) {
      body.push((lines[j] as string).slice(indent));
    }
    const { startLine, json } = splitMessage(body.join('\n'));
    const { text, dropped } = dropLineComments(json.replace(/\{\{\s*ucp_version\s*\}\}/g, UCP_VERSION));
    const at = `${page}:${i + 1}`;
    const base = { at, hadComments: dropped, ...(startLine ? { startLine } : {}) };
    if (text.trim() === '') blocks.push(base);
    else {
      try {
        blocks.push({ ...base, body: JSON.parse(text) });
      } catch (e) {
        blocks.push({ ...base, notJson: (e as Error).message });
      }
    }
    i = j;
  }
  return blocks;
}

/** A block judged against a shape: what it is, and the value to validate. */
export interface SpecExample {
  readonly at: string;
  readonly def: UcpDef;
  readonly side: 'request' | 'response';
  readonly operation?: UcpOperation;
  /** Where the value was taken from (`REST body`, `MCP structuredContent`, `fragment .discounts`). */
  readonly via: string;
  readonly value: unknown;
}

/** A block that is no request or response of a shape this merchant validates, and why. */
export interface SkippedBlock {
  readonly at: string;
  readonly why: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

// REST: the request of each checkout operation that has a body (get and cancel have none).
const REST_REQUESTS: readonly [RegExp, UcpOperation][] = [
  [/^POST \/checkout-sessions(?: |$)/, 'create'],
  [/^PUT \/checkout-sessions\/[^/ ]+(?: |$)/, 'update'],
  [/^POST \/checkout-sessions\/[^/ ]+\/complete(?: |$)/, 'complete'],
];

// REST (catalog/rest.md): each catalog operation's request body.
const CATALOG_REQUESTS: readonly [RegExp, UcpDef][] = [
  [/^POST \/catalog\/search(?: |$)/, 'catalog_search_request'],
  [/^POST \/catalog\/lookup(?: |$)/, 'catalog_lookup_request'],
  [/^POST \/catalog\/product(?: |$)/, 'catalog_get_product_request'],
];

// MCP (catalog/mcp.md): the tools whose arguments carry a `catalog` body.
const CATALOG_TOOLS: Readonly<Record<string, UcpDef>> = {
  search_catalog: 'catalog_search_request',
  lookup_catalog: 'catalog_lookup_request',
  get_product: 'catalog_get_product_request',
};

/** A catalog request body the page shows without its start line (catalog/rest.md does). */
function catalogRequestDef(body: Json): UcpDef | undefined {
  if ('ucp' in body) return undefined;
  if (Array.isArray(body.ids)) return 'catalog_lookup_request';
  if (typeof body.id === 'string') return 'catalog_get_product_request';
  if ('query' in body || 'filters' in body || 'pagination' in body) return 'catalog_search_request';
  return undefined;
}

// MCP (checkout-mcp.md): the tools whose arguments carry a `checkout` body.
const MCP_TOOLS: Readonly<Record<string, UcpOperation>> = {
  create_checkout: 'create',
  update_checkout: 'update',
  complete_checkout: 'complete',
};

/** The shape of a whole response body, from its members (the pages do not name it). */
function responseDef(body: Json): UcpDef | undefined {
  const ucp = isObject(body.ucp) ? body.ucp : undefined;
  if (!ucp) return undefined;
  if (ucp.status === 'error') return 'error_response';
  if ('product' in body) return 'catalog_get_product_response';
  if (Array.isArray(body.products)) {
    // A lookup names its capability (and its variants carry `inputs`); a search its own.
    const names = isObject(ucp.capabilities) ? Object.keys(ucp.capabilities) : [];
    return names.includes('dev.ucp.shopping.catalog.lookup')
      ? 'catalog_lookup_response'
      : 'catalog_search_response';
  }
  if (!('id' in body) && 'messages' in body) return 'error_response';
  if ('checkout_id' in body) return 'order';
  if ('line_items' in body) return 'checkout_with_discount_and_fulfillment';
  if (Object.keys(body).every((k) => k === 'ucp' || k === 'signing_keys') && isObject(ucp.services)) {
    // A business's REST and MCP services name their endpoint; a platform's name only a schema.
    const services = Object.values(ucp.services).flatMap((s) => (Array.isArray(s) ? s : []));
    return services.some((s) => isObject(s) && 'endpoint' in s) ? 'business_profile' : 'platform_profile';
  }
  return undefined;
}

function response(at: string, body: Json, via: string): SpecExample | SkippedBlock {
  const def = responseDef(body);
  if (def) return { at, def, side: 'response', via, value: body };
  return { at, why: `${via}: not a whole body (${Object.keys(body).join(', ')})` };
}

/** A fragment's part that is a shape of its own (the extension pages show `discounts`, `fulfillment`). */
function fragment(at: string, body: Json): SpecExample | SkippedBlock {
  const part = (def: UcpDef, via: string, value: unknown): SpecExample => ({
    at,
    def,
    side: 'response',
    via,
    value,
  });
  if ('discounts' in body) return part('discounts', 'fragment .discounts', body.discounts);
  if ('fulfillment' in body) return part('fulfillment', 'fragment .fulfillment', body.fulfillment);
  if ('kid' in body && 'kty' in body) return part('signing_key', 'fragment (a signing key)', body);
  const order = body['dev.ucp.shopping.order'];
  if (Array.isArray(order) && isObject(order[0])) {
    return part('order_platform_config', "fragment ['dev.ucp.shopping.order'][0].config", order[0].config);
  }
  return { at, why: `fragment {${Object.keys(body).join(', ')}}` };
}

/** What a block is: a request or response of a shape, or skipped with the reason. */
export function classifySpecBlock(block: SpecBlock): SpecExample | SkippedBlock {
  const { at, body, startLine } = block;
  if (block.notJson !== undefined) return { at, why: `not JSON (${block.notJson.split('\n')[0]})` };
  if (startLine?.startsWith('HTTP/')) {
    return isObject(body) ? response(at, body, 'REST response') : { at, why: 'REST response without a body' };
  }
  if (startLine) {
    const catalog = CATALOG_REQUESTS.find(([line]) => line.test(startLine))?.[1];
    if (catalog && isObject(body))
      return { at, def: catalog, side: 'request', via: 'REST request', value: body };
    const operation = REST_REQUESTS.find(([line]) => line.test(startLine))?.[1];
    if (!operation || !isObject(body))
      return { at, why: `REST request without a checkout body (${startLine})` };
    return { at, def: 'checkout', side: 'request', operation, via: 'REST request', value: body };
  }
  if (!isObject(body)) return { at, why: 'not an object' };
  if (body.jsonrpc === '2.0') {
    const params = isObject(body.params) ? body.params : {};
    const args = isObject(params.arguments) ? params.arguments : {};
    const catalog = CATALOG_TOOLS[String(params.name)];
    if (catalog && isObject(args.catalog))
      return { at, def: catalog, side: 'request', via: 'MCP arguments.catalog', value: args.catalog };
    const operation = MCP_TOOLS[String(params.name)];
    if (operation && isObject(args.checkout)) {
      return {
        at,
        def: 'checkout',
        side: 'request',
        operation,
        via: 'MCP arguments.checkout',
        value: args.checkout,
      };
    }
    const result = isObject(body.result) ? body.result : {};
    if (isObject(result.structuredContent))
      return response(at, result.structuredContent, 'MCP structuredContent');
    return {
      at,
      why: `JSON-RPC ${'error' in body ? 'error' : String(params.name ?? 'message')} without a UCP body`,
    };
  }
  if ('ucp' in body) return response(at, body, 'body');
  // A bare request body, on the catalog pages only (a discount fragment has an `id` too).
  const catalog = at.startsWith('catalog/') ? catalogRequestDef(body) : undefined;
  if (catalog) return { at, def: catalog, side: 'request', via: 'request body', value: body };
  return fragment(at, body);
}
