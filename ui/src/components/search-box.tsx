/**
 * Fuzzy search over jobs, groups, tasks, clients and allocations (/v1/search/fuzzy), as a
 * combobox: arrows move through the results, Enter opens one, Escape closes; "/" focuses it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { FuzzyMatch } from '../../../src/http/search/fuzzy-search.js';
import { apiWrite, getNamespace, withQuery } from '../lib/api.js';
import { nsQuery, seg } from '../lib/format.js';
import { navigate } from '../lib/router.js';

interface Hit {
  label: string;
  context: string;
  to: string;
}

/** Where a fuzzy match leads. */
function toHits(matches: Record<string, FuzzyMatch[]>): Hit[] {
  const out: Hit[] = [];
  for (const m of matches.jobs ?? []) out.push({ label: m.ID, context: 'job', to: `/jobs/${seg(m.ID)}${nsQuery(m.Scope[0])}` });
  for (const m of matches.groups ?? []) out.push({ label: m.ID, context: `group of ${m.Scope[1]}`, to: `/jobs/${seg(m.Scope[1] ?? '')}${nsQuery(m.Scope[0])}` });
  for (const m of matches.tasks ?? []) out.push({ label: m.ID, context: `task of ${m.Scope[1]}`, to: `/jobs/${seg(m.Scope[1] ?? '')}${nsQuery(m.Scope[0])}` });
  for (const m of matches.nodes ?? []) out.push({ label: m.ID, context: 'client', to: `/clients/${m.Scope[0]}` });
  for (const m of matches.allocs ?? []) out.push({ label: m.ID, context: 'allocation', to: `/allocations/${m.Scope[1]}` });
  return out;
}

/** "/" anywhere but in a text field or the terminal focuses the search box (installed once, at start). */
export function installSearchShortcut(): void {
  document.addEventListener('keydown', (e) => {
    const t = e.target as HTMLElement;
    if (e.key === '/' && !['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName) && !t.closest('.xterm')) {
      const box = document.getElementById('search-input');
      if (!box) return;
      e.preventDefault();
      box.focus();
    }
  });
}

export function SearchBox() {
  const [text, setText] = useState('');
  const [hits, setHits] = useState<Hit[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (text.trim().length < 2) {
      setHits(undefined);
      return;
    }
    let alive = true;
    const t = setTimeout(() => {
      apiWrite<{ Matches: Record<string, FuzzyMatch[]> }>('POST', withQuery('/v1/search/fuzzy', { namespace: getNamespace() }), { Text: text.trim(), Context: 'all' })
        .then((r) => {
          if (!alive) return;
          setHits(toHits(r.Matches ?? {}));
          setError(undefined);
          setActive(0);
        })
        .catch((err: Error) => alive && setError(err.message));
    }, 150);
    return () => {
      alive = false;
      clearTimeout(t);
    };
  }, [text]);

  const open = (h: Hit) => {
    setText('');
    setHits(undefined);
    navigate(h.to);
  };
  const expanded = hits !== undefined || error !== undefined;
  return (
    <div class="search">
      <input
        ref={input}
        id="search-input"
        type="search"
        role="combobox"
        list={undefined}
        aria-label="Search jobs, clients and allocations (press /)"
        aria-expanded={expanded}
        aria-controls="search-results"
        aria-activedescendant={hits?.length ? `search-hit-${active}` : undefined}
        placeholder="Search ( / )"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            setText('');
            setHits(undefined);
          } else if (hits?.length && e.key === 'ArrowDown') {
            e.preventDefault();
            setActive((a) => (a + 1) % hits.length);
          } else if (hits?.length && e.key === 'ArrowUp') {
            e.preventDefault();
            setActive((a) => (a - 1 + hits.length) % hits.length);
          } else if (hits?.length && e.key === 'Enter') {
            e.preventDefault();
            open(hits[active]!);
          }
        }}
      />
      {expanded && (
        <ul id="search-results" role="listbox" aria-label="Search results">
          {error && <li class="state error">{error}</li>}
          {hits?.length === 0 && <li class="muted" style={{ padding: '4px 10px' }}>No match.</li>}
          {hits?.map((h, i) => (
            <li key={`${h.context}:${h.to}:${h.label}`} id={`search-hit-${i}`} role="option" aria-selected={i === active}>
              <a
                href={`/ui${h.to}`}
                onClick={(e) => {
                  e.preventDefault();
                  open(h);
                }}
                class={i === active ? 'active' : ''}
              >
                {h.label}
                <span class="ctx">{h.context}</span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
