/** An allocation's directory: list folders (fs/ls) and show files (fs/readat, the first 256 KiB). */
import { useEffect, useState } from 'preact/hooks';
import type { AllocFileInfo } from '../../../src/http/fs/alloc-file-info.js';
import { ErrorBox, Loading } from '../components/states.js';
import { apiFetch, apiGet, withQuery } from '../lib/api.js';
import { bytes, shortId } from '../lib/format.js';
import { href } from '../lib/router.js';

const PREVIEW_BYTES = 256 * 1024;

type View = { kind: 'dir'; entries: AllocFileInfo[] } | { kind: 'file'; info: AllocFileInfo; text: string };

function join(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, '')}/${name}`;
}

export function AllocFilesPage({ alloc, path }: { alloc: string; path: string }) {
  const [view, setView] = useState<View | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  useEffect(() => {
    setView(undefined);
    setError(undefined);
    const ac = new AbortController();
    void (async () => {
      try {
        const q = { path };
        const { data: info } = await apiGet<AllocFileInfo>(withQuery(`/v1/client/fs/stat/${alloc}`, q), ac.signal);
        if (info.IsDir) {
          const { data } = await apiGet<AllocFileInfo[]>(withQuery(`/v1/client/fs/ls/${alloc}`, q), ac.signal);
          setView({ kind: 'dir', entries: [...data].sort((a, b) => Number(b.IsDir) - Number(a.IsDir) || a.Name.localeCompare(b.Name)) });
        } else {
          const res = await apiFetch(withQuery(`/v1/client/fs/readat/${alloc}`, { path, offset: 0, limit: PREVIEW_BYTES }), { signal: ac.signal });
          setView({ kind: 'file', info, text: await res.text() });
        }
      } catch (err) {
        if ((err as Error).name !== 'AbortError') setError(err as Error);
      }
    })();
    return () => ac.abort();
  }, [alloc, path]);

  const parts = path.split('/').filter(Boolean);
  return (
    <section aria-labelledby="files-title">
      <p class="crumbs">
        <a href={href(`/allocations/${alloc}`)}>Allocation {shortId(alloc)}</a>
      </p>
      <h1 id="files-title">Files</h1>
      <nav aria-label="Path" class="crumbs">
        <a href={href(`/allocations/${alloc}/fs?path=/`)}>alloc dir</a>
        {parts.map((p, i) => (
          <span key={i}>
            {' / '}
            <a href={href(`/allocations/${alloc}/fs?path=${encodeURIComponent('/' + parts.slice(0, i + 1).join('/'))}`)}>{p}</a>
          </span>
        ))}
      </nav>
      {error && <ErrorBox error={error} />}
      {!view && !error && <Loading what="files" />}
      {view?.kind === 'dir' &&
        (view.entries.length === 0 ? (
          <p class="state empty">This directory is empty.</p>
        ) : (
          <table class="list" aria-label="Directory">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Size</th>
                <th scope="col" class="hide-narrow">Mode</th>
                <th scope="col" class="hide-narrow">Modified</th>
              </tr>
            </thead>
            <tbody>
              {view.entries.map((e) => (
                <tr key={e.Name} data-testid="file-row">
                  <td>
                    <a href={href(`/allocations/${alloc}/fs?path=${encodeURIComponent(join(path, e.Name))}`)}>
                      {e.Name}
                      {e.IsDir ? '/' : ''}
                    </a>
                  </td>
                  <td>{e.IsDir ? '—' : bytes(e.Size)}</td>
                  <td class="hide-narrow mono">{e.FileMode}</td>
                  <td class="hide-narrow">{new Date(e.ModTime).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {view?.kind === 'file' && (
        <>
          <p class="muted">
            {bytes(view.info.Size)}
            {view.info.Size > PREVIEW_BYTES ? ` — showing the first ${bytes(PREVIEW_BYTES)}` : ''}
          </p>
          <pre class="code" tabIndex={0} aria-label={`Contents of ${path}`} data-testid="file-content">
            {view.text}
          </pre>
        </>
      )}
    </section>
  );
}
