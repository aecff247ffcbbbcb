/**
 * Which subgraph fetches the distributed gateway may share between callers (remote.ts).
 *
 * A fetch is *per-caller free* when none of the fields it selects is marked `@perCaller` in the
 * supergraph (a fresh signed token, a nonce: an answer that must belong to one request). Two
 * such fetches in flight at once with the same subgraph, query, variables and headers get the
 * same answer from the subgraph, so remote.ts sends one and hands each caller its own parse of
 * the reply. A fetch that selects a `@perCaller` field is never shared: at most its HTTP call is,
 * when it is an entity fetch (`_entities(representations:)`), by putting the representations of
 * several callers into one call, each resolved by the subgraph on its own (`batchEntities`).
 *
 * The match is by field name, whatever the type: a fetch that selects any field with the name
 * of a `@perCaller` field is treated as per caller (it errs towards not sharing).
 */
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { type DocumentNode, Kind, parse, visit } from 'graphql';

export const PER_CALLER_DIRECTIVE = 'perCaller';

/** The names of the fields the supergraph marks `@perCaller`. */
export function perCallerFieldNames(sdl: string | DocumentNode): Set<string> {
  const doc = typeof sdl === 'string' ? parse(sdl) : sdl;
  const names = new Set<string>();
  for (const def of doc.definitions) {
    if (
      def.kind !== Kind.OBJECT_TYPE_DEFINITION &&
      def.kind !== Kind.OBJECT_TYPE_EXTENSION &&
      def.kind !== Kind.INTERFACE_TYPE_DEFINITION
    )
      continue;
    for (const field of def.fields ?? []) {
      if (field.directives?.some((d) => d.name.value === PER_CALLER_DIRECTIVE)) names.add(field.name.value);
    }
  }
  return names;
}

/** Whether a fetch's document selects any of `names` (fragments and inline fragments included). */
export function selectsAny(query: string, names: ReadonlySet<string>): boolean {
  if (names.size === 0) return false;
  let found = false;
  visit(parse(query), {
    Field(node) {
      if (names.has(node.name.value)) found = true;
    },
  });
  return found;
}

/**
 * `perCaller(query)` for a set of field names, remembered per query text: the planner writes a
 * bounded set of fetch documents, and the oldest answers are dropped past `max`.
 */
export function perCallerCheck(names: ReadonlySet<string>, max = 1000): (query: string) => boolean {
  const seen = new Map<string, boolean>();
  return (query) => {
    let answer = seen.get(query);
    if (answer === undefined) {
      answer = selectsAny(query, names);
      if (seen.size >= max) seen.delete(seen.keys().next().value as string);
      seen.set(query, answer);
    }
    return answer;
  };
}

/** True for the planner's entity fetch: its only variable is the `representations` list. */
export function isEntityFetch(variables: Record<string, unknown> | undefined): boolean {
  if (!variables || !Array.isArray(variables.representations)) return false;
  for (const key in variables) if (key !== 'representations') return false;
  return true;
}

/**
 * One batched entity result split back into each caller's: `_entities` sliced by the counts of
 * representations each sent, every error whose path points into a caller's slice given to that
 * caller only (its index rebased), any other error (the call's own) to every caller. Undefined
 * when the result is not an entity result of the expected length (then each caller gets the
 * whole result, as a single call would have answered it).
 */
export function splitEntities(
  result: GatewayGraphQLResponse,
  counts: readonly number[],
): GatewayGraphQLResponse[] | undefined {
  const entities = (result.data as { _entities?: unknown } | null | undefined)?._entities;
  const total = counts.reduce((a, n) => a + n, 0);
  if (!Array.isArray(entities) || entities.length !== total) return undefined;
  const starts: number[] = [];
  let at = 0;
  for (const n of counts) {
    starts.push(at);
    at += n;
  }
  return counts.map((n, i) => {
    const start = starts[i] as number;
    const errors = [];
    for (const e of result.errors ?? []) {
      const index = e.path?.[0] === '_entities' ? e.path[1] : undefined;
      if (typeof index !== 'number') errors.push(e);
      else if (index >= start && index < start + n)
        errors.push({ ...e, path: ['_entities', index - start, ...(e.path?.slice(2) ?? [])] });
    }
    return {
      data: { _entities: entities.slice(start, start + n) },
      ...(errors.length ? { errors } : {}),
      ...(result.extensions ? { extensions: result.extensions } : {}),
    };
  });
}
