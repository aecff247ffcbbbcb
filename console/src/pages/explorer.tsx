/**
 * GraphQL explorer: GraphiQL (issue 14), bundled locally, over /graphql with the operator's own
 * token, the repository's persisted operations (schemas/operations/) as its starting tabs.
 * GraphiQL and React are loaded only when this page opens (their own chunk, never part of the
 * first page). Hidden in production unless CONSOLE_GRAPHQL_EXPLORER=true (gateway/console).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { session } from '../session.ts';
import { Loading } from '../ui/parts.tsx';

export function ExplorerPage() {
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<'loading' | 'ready' | Error>('loading');
  useEffect(() => {
    let unmount: (() => void) | undefined;
    let gone = false;
    import('../explorer/graphiql.ts')
      .then(({ mountGraphiQL }) => {
        if (gone || !host.current) return;
        unmount = mountGraphiQL(host.current, { token: () => session.token() });
        setState('ready');
      })
      .catch((err: unknown) => setState(err instanceof Error ? err : new Error(String(err))));
    return () => {
      gone = true;
      unmount?.();
    };
  }, []);
  return (
    <section aria-labelledby="explorer-h" class="explorer">
      <h1 id="explorer-h">GraphQL explorer</h1>
      {state === 'loading' ? <Loading what="GraphiQL" /> : null}
      {state instanceof Error ? (
        <p class="problem" role="alert">
          GraphiQL did not load: {state.message}
        </p>
      ) : null}
      <div ref={host} class="graphiql-host" data-testid="graphiql" />
    </section>
  );
}
