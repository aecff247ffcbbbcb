import type { FastifyReply, FastifyRequest } from 'fastify';
import { DemandCode, errorBody } from './codes.ts';
import { operationId, type PersistedOperations } from './manifest.ts';

/** What Apollo Server would read from one GraphQL request: the document and the APQ hash. */
interface Sent {
  query?: unknown;
  extensions?: unknown;
}

/**
 * Safelist mode: only the manifest's operations run. A route hook, before Apollo: Apollo looks
 * an APQ hash up (and answers PERSISTED_QUERY_NOT_FOUND, an invitation to register) before any
 * plugin may refuse, and a plugin that throws earlier than didResolveOperation gets a 500. Here
 * nothing unlisted is parsed, registered or planned, let alone sent to a subgraph.
 *
 * A request runs when its document's sha256 is a manifest id, or when it sends no document and
 * its `extensions.persistedQuery.sha256Hash` is one. Anything else that could run is refused
 * with 400: QUERY_NOT_IN_SAFELIST for a document (an APQ registration included),
 * PERSISTED_QUERY_NOT_IN_LIST for a hash. A request with neither is left to Apollo, which
 * refuses it (there is nothing to run).
 */
export function safelistHook(manifest: PersistedOperations, refused: (code: DemandCode) => void) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    for (const sent of requestsOf(req)) {
      const code = refusal(sent, manifest);
      if (!code) continue;
      refused(code);
      const message =
        code === DemandCode.NOT_IN_LIST
          ? 'This operation id is not in the persisted-operation safelist.'
          : 'This operation is not in the persisted-operation safelist: send the id of a registered operation.';
      return reply.code(400).type('application/json; charset=utf-8').send(errorBody(code, message));
    }
  };
}

function refusal(sent: Sent, manifest: PersistedOperations): DemandCode | undefined {
  const { query } = sent;
  if (query !== undefined && query !== null && query !== '') {
    return typeof query === 'string' && manifest.has(operationId(query))
      ? undefined
      : DemandCode.NOT_IN_SAFELIST;
  }
  const hash = persistedHash(sent.extensions);
  if (hash === undefined) return undefined;
  return typeof hash === 'string' && manifest.has(hash) ? undefined : DemandCode.NOT_IN_LIST;
}

const persistedHash = (extensions: unknown): unknown => {
  if (typeof extensions !== 'object' || extensions === null) return undefined;
  const pq = (extensions as { persistedQuery?: unknown }).persistedQuery;
  if (typeof pq !== 'object' || pq === null) return undefined;
  return (pq as { sha256Hash?: unknown }).sha256Hash ?? null;
};

/** The requests as Apollo reads them: a POST body (an array is a batch), or GET parameters given once. */
function requestsOf(req: FastifyRequest): Sent[] {
  if (req.method === 'GET') {
    const params = new URL(req.url, 'http://graphql.invalid').searchParams;
    const once = (name: string) => {
      const all = params.getAll(name);
      // Given twice, Apollo refuses the request; say "unlisted" rather than guess which it meant.
      return all.length > 1 ? [0] : all[0];
    };
    const extensions = once('extensions');
    return [
      {
        query: once('query'),
        extensions: typeof extensions === 'string' ? jsonOrJunk(extensions) : undefined,
      },
    ];
  }
  const body = req.body;
  if (Array.isArray(body)) return body.map((b) => (typeof b === 'object' && b !== null ? b : { query: b }));
  return typeof body === 'object' && body !== null ? [body as Sent] : [];
}

const jsonOrJunk = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return { persistedQuery: { sha256Hash: null } };
  }
};
