/**
 * The catalog import's bulk upload (schemas/openapi/pricing.yaml, docs/catalog.md "Import"):
 *
 *   POST /v1/catalog/imports/{importId}/products[?first_line=1]
 *   Content-Type: application/jsonl (or application/x-ndjson), body: products.jsonl, streamed
 *
 * The import is opened and committed through GraphQL as before (startCatalogImport,
 * commitCatalogImport); this route takes its products.jsonl as one streamed body instead of a
 * hundred GraphQL appends of 160 KiB (the GraphQL body limit is 256 KiB), which bounded the
 * command's rate. Each chunk of lines is the service's `append` (import/stream.ts): the same
 * judgement, per-line report and staging. Authorisation is the GraphQL mutation's:
 * the roles of `Mutation.appendCatalogImport` in schemas/pricing.graphql, from a bearer token.
 * The body has no total limit (a feed of a million products is a few GB); each line has the
 * feed's (MAX_LINE_BYTES, a longer one is reported, not held), and a file of garbage fails the
 * import at its first chunks, which ends the reading. Errors: pricing's `{"error": "..."}`. A
 * client that goes away mid-body is its own doing (issue 47): 499, logged at info, never a 5xx;
 * the import keeps the chunks staged before and is resumed with `?first_line=`.
 */
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { hasAnyRole } from '../../lib/auth/caller.ts';
import type { CallerVerifier } from '../../lib/auth/jwt.ts';
import { roleRequirements } from '../../lib/auth/permissions.ts';
import { callerOf } from '../../lib/graphql/caller-context.ts';
import {
  type CatalogImports,
  ImportInputError,
  ImportNotFound,
  ImportStateError,
} from './catalog/import/service.ts';
import { appendStream } from './catalog/import/stream.ts';

/** The media types of a JSON Lines body (the feed spec's `.jsonl`; NDJSON's older name). */
const LINES_TYPES = ['application/jsonl', 'application/x-ndjson', 'application/jsonlines'];

/** The roles of the GraphQL append, read from its SDL (one source for who may import). */
export function uploadRoles(): readonly string[] {
  const sdl = readFileSync(new URL('../../schemas/pricing.graphql', import.meta.url), 'utf8');
  const roles = roleRequirements(sdl).get('Mutation.appendCatalogImport');
  if (!roles?.length)
    throw new Error('schemas/pricing.graphql: Mutation.appendCatalogImport has no @requiresRole');
  return roles;
}

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

async function authorise(req: FastifyRequest, verifier: CallerVerifier, roles: readonly string[]) {
  const bearer = { 'www-authenticate': 'Bearer' };
  let caller: Awaited<ReturnType<typeof callerOf>>['caller'];
  try {
    caller = (await callerOf(req, verifier)).caller;
  } catch (err) {
    throw new HttpRefusal(401, (err as Error).message, bearer);
  }
  if (!caller.authenticated)
    throw new HttpRefusal(401, `a bearer token with the role ${roles.join(' or ')} is required`, bearer);
  if (!hasAnyRole(caller, roles))
    throw new HttpRefusal(403, `requires one of the roles: ${roles.join(', ')}`);
}

function statusOf(
  err: unknown,
): { status: number; message: string; headers?: Record<string, string> } | undefined {
  if (err instanceof HttpRefusal) return { status: err.status, message: err.message, headers: err.headers };
  if (err instanceof ImportInputError) return { status: 400, message: err.message };
  if (err instanceof ImportNotFound) return { status: 404, message: err.message };
  if (err instanceof ImportStateError) return { status: 409, message: err.message };
  const status = (err as { statusCode?: number }).statusCode;
  if (status !== undefined && status >= 400 && status < 500)
    return { status, message: (err as Error).message };
  return undefined;
}

/**
 * The body stream failed under the handler because its connection went (Node destroys the
 * request with ECONNRESET "aborted" when the socket closes mid-body, or when the server's
 * request timeout cuts it off): the body never reached its end, and no reply can reach the client.
 */
function clientWentAway(req: FastifyRequest, err: unknown): boolean {
  return req.raw.readableAborted && (err as { code?: string }).code === 'ECONNRESET';
}

export const catalogImportRoutes =
  (imports: CatalogImports, verifier: CallerVerifier): FastifyPluginAsync =>
  async (app) => {
    const roles = uploadRoles();
    // The body is handed over as the raw stream: read line by line by the handler, never whole.
    for (const type of LINES_TYPES)
      app.addContentTypeParser(type, (_req, payload, done) => done(null, payload));
    app.setErrorHandler((err, req, reply: FastifyReply) => {
      if (clientWentAway(req, err)) {
        // Issue 47: the client's doing, not a failure. The chunks staged before are kept (the
        // import says how far it read); the one being filled is not staged. 499 (nginx's
        // "client closed request") is written to nobody, but is a 4xx wherever it is counted.
        req.log.info(
          { importId: (req.params as { importId?: string }).importId, code: (err as { code?: string }).code },
          'catalog upload: the body stopped before its end (the client went away); whole chunks kept',
        );
        return reply.code(499).send({ error: 'the request body stopped before its end' });
      }
      const known = statusOf(err);
      if (!known) {
        req.log.error({ err }, 'catalog upload failed');
        return reply.code(500).send({ error: 'unexpected failure' });
      }
      // Whatever of the body was not read is not waited for.
      return reply
        .code(known.status)
        .headers({ ...known.headers, connection: 'close' })
        .send({ error: known.message });
    });

    app.post<{ Params: { importId: string }; Querystring: { first_line?: string } }>(
      '/v1/catalog/imports/:importId/products',
      {
        // Before the body: no token, no reading (and an unknown media type, no reading either).
        onRequest: async (req) => {
          await authorise(req, verifier, roles);
          const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
          if (!LINES_TYPES.includes(type))
            throw new HttpRefusal(415, `send products.jsonl as ${LINES_TYPES[0]}, one Product per line`);
        },
      },
      async (req, reply) => {
        const raw = req.query.first_line ?? '1';
        if (!/^[1-9]\d{0,9}$/.test(raw))
          throw new ImportInputError('first_line', 'first_line must be a whole number of at least 1');
        const body = req.body as AsyncIterable<Buffer> | undefined;
        const done = await appendStream(
          imports,
          req.params.importId,
          Number(raw),
          body ?? (async function* () {})(),
        );
        // A failed import stops the reading: the rest of the body is not waited for.
        if (done.status !== 'OPEN') reply.header('connection', 'close');
        return reply.code(200).send(done);
      },
    );
  };
