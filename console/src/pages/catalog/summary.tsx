/** A page of search results (catalog.tsx): the count, the corrected query, the table and the pager. */
import type { SearchPage } from '../../catalog-search.ts';
import { Empty } from '../../ui/parts.tsx';
import { Results } from './results.tsx';

export function SearchSummary({
  page,
  query,
  cursors,
  onCursors,
}: {
  page: SearchPage;
  /** The query as submitted (shown beside the API's correction of it). */
  query: string | undefined;
  /** The cursors of the pages before this one and this one's (Previous pops one). */
  cursors: (string | null)[];
  onCursors: (next: (string | null)[]) => void;
}) {
  return (
    <div>
      <p role="status" data-testid="search-summary">
        {page.totalCount}
        {page.totalCountExact ? '' : '+'} {page.totalCount === 1 ? 'product' : 'products'}
        {page.correctedQuery ? (
          <>
            {' '}
            for <q>{page.correctedQuery}</q> (corrected from <q>{query?.trim()}</q>)
          </>
        ) : null}
      </p>
      {page.nodes.length === 0 ? (
        <Empty>No product matches.</Empty>
      ) : (
        <Results page={page} cursors={cursors} />
      )}
      <div class="toolbar">
        {cursors.length > 1 ? (
          <button type="button" onClick={() => onCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
        ) : null}
        {page.pageInfo.hasNextPage && page.pageInfo.endCursor ? (
          <button type="button" onClick={() => onCursors([...cursors, page.pageInfo.endCursor as string])}>
            Next page
          </button>
        ) : null}
      </div>
    </div>
  );
}
