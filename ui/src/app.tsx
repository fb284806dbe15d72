/** The shell: header with navigation, namespace, token and search, and the page for the path. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { LiveIndicator } from './components/states.js';
import { NamespaceSelect } from './components/namespace-select.js';
import { SearchBox } from './components/search-box.js';
import { TokenLink } from './components/token-link.js';
import { href, matchRoute, useLocation } from './lib/router.js';
import { AllocDetailPage } from './pages/alloc-detail.js';
import { AllocFilesPage } from './pages/alloc-files.js';
import { ExecTerminalPage } from './pages/exec-terminal.js';
import { TaskLogsPage } from './pages/task-logs.js';
import { ClientDetailPage, ClientsListPage } from './pages/clients.js';
import { DeploymentsPage, EvaluationsPage, ServersPage } from './pages/cluster.js';
import { TopologyPage } from './pages/topology.js';
import { DeploymentDetailPage } from './pages/deployment-detail.js';
import { JobRunPage } from './pages/job-run.js';
import { JobDetailPage } from './pages/job-detail.js';
import { JobsListPage } from './pages/jobs-list.js';
import { TokenSettingsPage } from './pages/token-settings.js';
import { hub } from './lib/event-hub.js';
import { loadSession } from './lib/session.js';

/** A page for a path pattern; params are the decoded `:names`. */
interface Route {
  pattern: string;
  render: (params: Record<string, string>, query: URLSearchParams, tokenChanged: () => void) => ComponentChildren;
}

const ROUTES: Route[] = [
  { pattern: '/settings/tokens', render: (_p, _q, tokenChanged) => <TokenSettingsPage onChange={tokenChanged} /> },
  { pattern: '/jobs', render: () => <JobsListPage /> },
  { pattern: '/jobs/:id', render: (p, q) => <JobDetailPage id={p.id!} ns={q.get('namespace') ?? 'default'} tab="" /> },
  { pattern: '/run', render: () => <JobRunPage /> },
  { pattern: '/clients', render: () => <ClientsListPage /> },
  { pattern: '/clients/:id', render: (p) => <ClientDetailPage id={p.id!} /> },
  { pattern: '/servers', render: () => <ServersPage /> },
  { pattern: '/topology', render: () => <TopologyPage /> },
  { pattern: '/evaluations', render: () => <EvaluationsPage /> },
  { pattern: '/deployments', render: () => <DeploymentsPage /> },
  { pattern: '/deployments/:id', render: (p) => <DeploymentDetailPage id={p.id!} /> },
  { pattern: '/allocations/:id', render: (p) => <AllocDetailPage id={p.id!} /> },
  { pattern: '/allocations/:id/fs', render: (p, q) => <AllocFilesPage alloc={p.id!} path={q.get('path') ?? '/'} /> },
  {
    pattern: '/allocations/:id/:task/logs',
    render: (p, q) => <TaskLogsPage alloc={p.id!} task={p.task!} type={q.get('type') === 'stderr' ? 'stderr' : 'stdout'} origin={q.get('origin') === 'end' ? 'end' : 'start'} />,
  },
  { pattern: '/allocations/:id/:task/exec', render: (p) => <ExecTerminalPage alloc={p.id!} task={p.task!} /> },
  { pattern: '/jobs/:id/:tab', render: (p, q) => <JobDetailPage id={p.id!} ns={q.get('namespace') ?? 'default'} tab={p.tab!} /> },
];

const NAV: Array<[string, string]> = [
  ['/jobs', 'Jobs'],
  ['/clients', 'Clients'],
  ['/servers', 'Servers'],
  ['/topology', 'Topology'],
  ['/evaluations', 'Evaluations'],
  ['/deployments', 'Deployments'],
];

function NotFound({ path }: { path: string }) {
  return (
    <section>
      <h1>Not found</h1>
      <p class="state error" role="alert">
        There is no page at {path}. <a href={href('/jobs')}>Go to the jobs</a>.
      </p>
    </section>
  );
}

export function App() {
  const location = useLocation();
  // Changing the namespace or token re-mounts the page so every read starts over.
  const [settingsKey, setSettingsKey] = useState(0);
  // A new token: who we are is read again, the event stream reconnects with it, pages re-mount.
  const tokenChanged = () => {
    loadSession(true);
    hub.restart();
    setSettingsKey((k) => k + 1);
  };
  // The root is the jobs list. Its URL is replaced in place during this render: navigating
  // would notify listeners that are not subscribed yet on the first render, leaving a blank page.
  if (location.path === '/') history.replaceState(null, '', href('/jobs') + window.location.search);
  const path = location.path === '/' ? '/jobs' : location.path;
  const { query } = location;
  let page: ComponentChildren = <NotFound path={path} />;
  for (const r of ROUTES) {
    const params = matchRoute(r.pattern, path);
    if (params) {
      page = r.render(params, query, tokenChanged);
      break;
    }
  }
  const section = '/' + (path.split('/')[1] ?? '');
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href('/jobs')}>
          Caravan
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([to, label]) => (
              <li key={to}>
                <a href={href(to)} aria-current={section === to ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="tools">
          <SearchBox />
          <NamespaceSelect onChange={() => setSettingsKey((k) => k + 1)} />
          <TokenLink current={path === '/settings/tokens'} />
          <LiveIndicator />
        </div>
      </header>
      <main id="main" key={`${settingsKey}:${path}`}>
        {page}
      </main>
    </>
  );
}
