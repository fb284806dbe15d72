/**
 * Paging of a long list the server pages (Nomad's `per_page` and `next_token`; the next page's
 * token comes back in X-Nomad-NextToken): only one page of rows is ever read or rendered, and
 * the tokens of the pages before are kept so Previous works without reading them again.
 */
import { useState } from 'preact/hooks';

/** The rows a page shows. */
export const PAGE_SIZE = 50;

export interface PagerState {
  /** The token the current page starts at ('' for the first page). */
  token: string;
  /** 1-based. */
  page: number;
  next(token: string): void;
  prev(): void;
  first(): void;
}

/** The position in a paged list; `resetKey` changing (a new filter, a new job) goes back to page 1. */
export function usePager(resetKey = ''): PagerState {
  const [state, setState] = useState<{ key: string; tokens: string[] }>({ key: resetKey, tokens: [''] });
  const tokens = state.key === resetKey ? state.tokens : [''];
  return {
    token: tokens[tokens.length - 1]!,
    page: tokens.length,
    next: (token) => setState({ key: resetKey, tokens: [...tokens, token] }),
    prev: () => setState({ key: resetKey, tokens: tokens.length > 1 ? tokens.slice(0, -1) : tokens }),
    first: () => setState({ key: resetKey, tokens: [''] }),
  };
}

/** "Rows 51–100 of 10,000" with First, Previous and Next; `total` undefined while unknown. */
export function Pager({ pager, rows, nextToken, total, what, perPage = PAGE_SIZE }: { pager: PagerState; rows: number; nextToken: string; total?: number | undefined; what: string; perPage?: number }) {
  const from = rows === 0 ? 0 : (pager.page - 1) * perPage + 1;
  const to = (pager.page - 1) * perPage + rows;
  return (
    <nav class="pager actions" aria-label={`Pages of ${what}`}>
      <button type="button" disabled={pager.page === 1} onClick={() => pager.first()}>
        First
      </button>
      <button type="button" disabled={pager.page === 1} onClick={() => pager.prev()}>
        Previous
      </button>
      <span data-testid="pager-position">
        Page {pager.page} · {what} {from.toLocaleString('en-US')}–{to.toLocaleString('en-US')}
        {total !== undefined && <> of <span data-testid="pager-total">{total.toLocaleString('en-US')}</span></>}
      </span>
      <button type="button" disabled={nextToken === ''} onClick={() => pager.next(nextToken)}>
        Next
      </button>
    </nav>
  );
}
