/**
 * A small history router for the pages under /ui/: paths are matched against patterns with
 * `:params`, links are ordinary <a href> elements that navigate without a reload, and deep
 * links work because the agent answers every /ui/ path with the page.
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/ui';

/** The app-relative path of the current location ("/jobs/web"). */
export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return p === '' ? '/' : p;
}

const listeners = new Set<() => void>();

/** Goes to an app path ("/jobs/web?namespace=x"). */
export function navigate(to: string, replace = false): void {
  const url = BASE + to;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const fn of listeners) fn();
  window.scrollTo(0, 0);
}

/** Re-renders on navigation; returns the current path and query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const fn = () => setTick((t) => t + 1);
    listeners.add(fn);
    window.addEventListener('popstate', fn);
    return () => {
      listeners.delete(fn);
      window.removeEventListener('popstate', fn);
    };
  }, []);
  return { path: currentPath(), query: new URLSearchParams(location.search) };
}

/** Matches "/jobs/:id" against a path; resolves decoded params or undefined. */
export function matchRoute(pattern: string, path: string): Record<string, string> | undefined {
  const pp = pattern.split('/').filter(Boolean);
  const parts = path.split('/').filter(Boolean);
  if (pp.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pp.length; i++) {
    const p = pp[i]!;
    const v = parts[i]!;
    if (p.startsWith(':')) params[p.slice(1)] = decodeURIComponent(v);
    else if (p !== v) return undefined;
  }
  return params;
}

/** The href of an app path, for <a>. */
export function href(to: string): string {
  return BASE + to;
}

/** Clicks on same-origin /ui/ links navigate in place (modifier keys still open new tabs). */
export function installLinkInterceptor(): void {
  document.addEventListener('click', (ev) => {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    const a = (ev.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(BASE + '/')) return;
    ev.preventDefault();
    navigate(url.pathname.slice(BASE.length) + url.search);
  });
}
