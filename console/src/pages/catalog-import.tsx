/**
 * The Catalog page's import: metadata.json and products.jsonl chosen in the browser, the file
 * streamed to the API in chunks (catalog-import.ts, the CLI's protocol), two progress bars (the
 * file sent, then the products written) and the per-line report of refused lines.
 */
import { useReducer, useRef, useState } from 'preact/hooks';
import { graphql } from '../api.ts';
import {
  type CatalogImport,
  fileText,
  IDLE_IMPORT,
  importProgress,
  reduceImport,
  runImport,
} from '../catalog-import.ts';
import { claimsOf, session } from '../session.ts';
import { asApiError } from '../ui/async.ts';
import { ProblemView } from '../ui/parts.tsx';

const ROLE = 'catalog:admin';

export function CatalogImportPanel() {
  const [metadataFile, setMetadataFile] = useState<File | null>(null);
  const [productsFile, setProductsFile] = useState<File | null>(null);
  const [mode, setMode] = useState<'FULL' | 'PARTIAL'>('PARTIAL');
  const [view, dispatch] = useReducer(reduceImport, IDLE_IMPORT);
  const [refusal, setRefusal] = useState<ReturnType<typeof asApiError> | null>(null);
  const [running, setRunning] = useState(false);
  const cancelled = useRef(false);
  const token = session.token();
  // For the operator's information only: the button stays, and the API decides (its 403 is shown).
  const lacksRole = token ? !(claimsOf(token)?.roles ?? []).includes(ROLE) : false;

  const start = async () => {
    if (!metadataFile || !productsFile) return;
    setRefusal(null);
    dispatch({ type: 'reset' });
    let metadata: unknown;
    try {
      metadata = JSON.parse(await metadataFile.text());
    } catch (err) {
      dispatch({ type: 'stopped', problem: `${metadataFile.name} is not JSON: ${(err as Error).message}` });
      return;
    }
    cancelled.current = false;
    setRunning(true);
    try {
      await runImport(
        { mode, metadata, size: productsFile.size },
        {
          graphql: (q, v) => graphql(q, v),
          sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
          text: fileText(productsFile),
          cancelled: () => cancelled.current,
        },
        dispatch,
      );
    } catch (err) {
      const e = asApiError(err);
      setRefusal(e);
      dispatch({ type: 'stopped', problem: e.detail || e.title });
    } finally {
      setRunning(false);
    }
  };

  const progress = importProgress(view);
  const current = view.current;
  return (
    <section class="panel" aria-labelledby="import-h" data-testid="catalog-import">
      <h2 id="import-h">Import a product feed</h2>
      <p class="muted">
        The merchant's ACP feed: <code>metadata.json</code> and <code>products.jsonl</code> (one Product per
        line). Each line is judged alone; a refused line is listed with its number and stores nothing.{' '}
        <em>Full</em> replaces the product set (products the file lacks are removed, unless a line was
        refused); <em>Partial</em> creates or updates the file's products only.
      </p>
      {lacksRole ? (
        <p class="problem" data-testid="import-role">
          Your token does not carry <code>{ROLE}</code>, which the import needs: the API will refuse it.
        </p>
      ) : null}
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label>
          metadata.json
          <input
            type="file"
            accept=".json,application/json"
            onChange={(e) => setMetadataFile(e.currentTarget.files?.[0] ?? null)}
          />
        </label>
        <label>
          products.jsonl
          <input
            type="file"
            accept=".jsonl,.ndjson,.json"
            onChange={(e) => setProductsFile(e.currentTarget.files?.[0] ?? null)}
          />
        </label>
        <label>
          Mode
          <select value={mode} onChange={(e) => setMode(e.currentTarget.value as 'FULL' | 'PARTIAL')}>
            <option value="PARTIAL">Partial: create or update</option>
            <option value="FULL">Full: replace the product set</option>
          </select>
        </label>
        <button type="submit" disabled={running || !metadataFile || !productsFile}>
          Import
        </button>
        {running && view.phase === 'sending' ? (
          <button
            type="button"
            onClick={() => {
              cancelled.current = true;
            }}
          >
            Cancel the import
          </button>
        ) : null}
      </form>
      {refusal ? <ProblemView error={refusal} /> : null}
      {view.phase !== 'idle' ? (
        <div class="import-progress">
          <label>
            File sent
            <progress data-testid="sent" value={progress.sent.value} max={progress.sent.max} />
          </label>
          {progress.written ? (
            <label>
              Products written
              <progress data-testid="written" value={progress.written.value} max={progress.written.max} />
            </label>
          ) : null}
          <p role="status" data-testid="import-status" data-phase={view.phase}>
            {progress.words}
          </p>
          {current?.note && view.phase !== 'failed' ? <p>{current.note}</p> : null}
        </div>
      ) : null}
      {current && current.refused > 0 ? <RefusedLines current={current} /> : null}
    </section>
  );
}

function RefusedLines({ current }: { current: CatalogImport }) {
  const errors = current.errors ?? [];
  return (
    <div class="scroll">
      <table data-testid="refused-lines">
        <caption>
          {current.refused} refused {current.refused === 1 ? 'line' : 'lines'}
          {errors.length < current.refused
            ? errors.length
              ? ` (the first ${errors.length} listed)`
              : ' (listed when the import ends)'
            : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">Line</th>
            <th scope="col">JSONPath</th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {errors.map((e) => (
            <tr key={`${e.line} ${e.path}`}>
              <td class="num">{e.line}</td>
              <td>
                <code>{e.path}</code>
              </td>
              <td>{e.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
