/**
 * GraphQL explorer: a small query editor over /graphql with the operator's token, the
 * repository's persisted operations (schemas/operations/) as examples. GraphiQL is not
 * installed here and would be the largest thing in the console; this is what an operator
 * needs to try an operation. It is hidden in production unless CONSOLE_GRAPHQL_EXPLORER is set.
 */
import { useState } from 'preact/hooks';
import { graphqlRaw } from '../api.ts';
import { useAction } from '../ui/async.ts';
import { Loading, ProblemView } from '../ui/parts.tsx';

// Vite inlines the operation documents at build time (no request, no server path).
const files = import.meta.glob('../../../schemas/operations/*.graphql', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

export const EXAMPLES = Object.entries(files)
  .map(([path, text]) => ({ name: path.replace(/^.*\/|\.graphql$/g, ''), text }))
  .sort((a, b) => a.name.localeCompare(b.name));

export function ExplorerPage() {
  const [query, setQuery] = useState(EXAMPLES.find((e) => e.name === 'promotions')?.text ?? '{ __typename }');
  const [variables, setVariables] = useState('{}');
  const [varsError, setVarsError] = useState<string | null>(null);
  const run = useAction(async () => {
    const vars = variables.trim() ? JSON.parse(variables) : undefined;
    return graphqlRaw(query, vars);
  });
  const execute = () => {
    try {
      if (variables.trim()) JSON.parse(variables);
      setVarsError(null);
      void run.run();
    } catch (err) {
      setVarsError(`Variables are not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  return (
    <section aria-labelledby="explorer-h">
      <h1 id="explorer-h">GraphQL explorer</h1>
      <div class="toolbar">
        <label>
          Example{' '}
          <select
            onChange={(e) => {
              const ex = EXAMPLES.find((x) => x.name === e.currentTarget.value);
              if (ex) setQuery(ex.text);
            }}
          >
            <option value="">choose an operation…</option>
            {EXAMPLES.map((e) => (
              <option key={e.name} value={e.name}>
                {e.name}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={execute} title="Ctrl+Enter">
          Run
        </button>
      </div>
      <div class="editor">
        <label>
          Operation
          <textarea
            rows={16}
            spellcheck={false}
            value={query}
            onInput={(e) => setQuery(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) execute();
            }}
          />
        </label>
        <label>
          Variables (JSON)
          <textarea
            rows={16}
            spellcheck={false}
            value={variables}
            onInput={(e) => setVariables(e.currentTarget.value)}
          />
        </label>
      </div>
      {varsError ? (
        <p class="problem" role="alert">
          {varsError}
        </p>
      ) : null}
      {run.state === 'loading' ? <Loading what="the answer" /> : null}
      {run.state === 'error' ? <ProblemView error={run.error} /> : null}
      {run.state === 'ok' ? (
        <div class="panel">
          <p>HTTP {run.data.status}</p>
          <pre data-testid="graphql-result">{JSON.stringify(run.data.body, null, 2)}</pre>
        </div>
      ) : null}
    </section>
  );
}
