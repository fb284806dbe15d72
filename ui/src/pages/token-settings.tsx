/**
 * The sign-in page (Nomad's /ui/settings/tokens): enter a token's secret ID, see who it is —
 * name, type, accessor, policies (and their rules), roles, expiry — and sign out. The secret is
 * checked with /v1/acl/token/self before it is kept, so a mistyped one is refused here rather
 * than on every page.
 */
import { useState } from 'preact/hooks';
import { getToken, setToken } from '../lib/api.js';
import { href } from '../lib/router.js';
import { readSession, useSession, type Session } from '../lib/session.js';
import { ErrorBox, Loading } from '../components/states.js';

/** A token's expiry in words: "never", or the local time (and "expired" when past). */
function expiry(t: string | null): string {
  if (!t || t.startsWith('0001-')) return 'Never';
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? t : `${new Date(ms).toLocaleString()}${ms < Date.now() ? ' (expired)' : ''}`;
}

function WhoAmI({ session, onSignOut }: { session: Extract<Session, { state: 'signed-in' }>; onSignOut: () => void }) {
  const t = session.token;
  return (
    <div data-testid="token-identity">
      {session.anonymous ? (
        <p class="notice">
          Not signed in: requests carry no token, so this agent treats them as its <strong>anonymous</strong> token, which may do only what the <code>anonymous</code> policy grants.
        </p>
      ) : (
        <p class="notice">Signed in. Every request from this browser carries this token.</p>
      )}
      <dl class="facts" aria-label="Token">
        <dt>Name</dt>
        <dd data-testid="token-name">{t.Name || '—'}</dd>
        <dt>Type</dt>
        <dd data-testid="token-type">{t.Type}</dd>
        <dt>Accessor ID</dt>
        <dd class="mono">{t.AccessorID}</dd>
        <dt>Policies</dt>
        <dd data-testid="token-policies">{t.Type === 'management' ? 'management (every capability)' : (t.Policies ?? []).join(', ') || 'none'}</dd>
        {(t.Roles ?? []).length > 0 && (
          <>
            <dt>Roles</dt>
            <dd>{(t.Roles ?? []).map((r) => r.Name || r.ID).join(', ')}</dd>
          </>
        )}
        <dt>Expires</dt>
        <dd data-testid="token-expiry">{expiry(t.ExpirationTime)}</dd>
      </dl>
      {session.policies.length > 0 && (
        <>
          <h2>Policies</h2>
          {session.policies.map((p) => (
            <details key={p.Name} class="card" data-testid="token-policy">
              <summary>
                <strong>{p.Name}</strong> {p.Description && <span class="muted">— {p.Description}</span>}
              </summary>
              <pre class="code">{p.Rules}</pre>
            </details>
          ))}
        </>
      )}
      {!session.anonymous && (
        <p>
          <button type="button" class="danger" onClick={onSignOut}>
            Sign out
          </button>
        </p>
      )}
    </div>
  );
}

export function TokenSettingsPage({ onChange }: { onChange: () => void }) {
  const session = useSession();
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<Error | undefined>(undefined);
  const signIn = async (e: Event) => {
    e.preventDefault();
    const value = secret.trim();
    if (!value) return;
    setBusy(true);
    setRefused(undefined);
    try {
      await readSession(value);
      setToken(value);
      setSecret('');
      onChange();
    } catch (err) {
      setRefused(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const signOut = () => {
    setToken('');
    onChange();
  };
  return (
    <section aria-labelledby="tokens-title">
      <h1 id="tokens-title">ACL token</h1>
      {session.state === 'loading' && <Loading what="the token" />}
      {session.state === 'acl-disabled' && (
        <p class="notice" data-testid="acl-disabled">
          ACLs are disabled on this agent: every request is allowed, and a token is sent but not checked.
          {getToken() && ' A token is stored in this browser.'}
        </p>
      )}
      {session.state === 'error' && (
        <>
          <ErrorBox error={session.error} />
          <p>
            The stored token was refused. Sign in with another one, or{' '}
            <button type="button" onClick={signOut}>
              forget it
            </button>
            .
          </p>
        </>
      )}
      {session.state === 'signed-in' && <WhoAmI session={session} onSignOut={signOut} />}
      {session.state !== 'loading' && (
        <form class="card sign-in" onSubmit={(e) => void signIn(e)} aria-label="Sign in">
          <h2>{session.state === 'signed-in' && !session.anonymous ? 'Use another token' : 'Sign in with a token'}</h2>
          <label>
            Secret ID
            <input type="password" autoComplete="off" value={secret} placeholder="xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" onInput={(e) => setSecret(e.currentTarget.value)} />
          </label>{' '}
          <button type="submit" class="primary" disabled={busy || secret.trim() === ''}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
          {refused && (
            <p class="state error" role="alert" data-testid="sign-in-error">
              That token was refused: {refused.message}.
            </p>
          )}
          <p class="muted">
            The secret is kept in this browser (localStorage) and sent as X-Nomad-Token. Create one with <code>caravan acl token create</code>; the bootstrap token is a management token.
          </p>
        </form>
      )}
      <p>
        <a href={href('/jobs')}>Go to the jobs</a>
      </p>
    </section>
  );
}
