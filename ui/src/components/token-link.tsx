/** The header's way to the sign-in page, naming who the UI is signed in as. */
import { href } from '../lib/router.js';
import { useSession } from '../lib/session.js';

export function TokenLink({ current }: { current: boolean }) {
  const s = useSession();
  const label =
    s.state === 'signed-in' ? (s.anonymous ? 'Sign in' : `Token: ${s.token.Name || s.token.AccessorID.slice(0, 8)}`) : s.state === 'error' ? 'Token refused' : s.state === 'acl-disabled' ? 'ACL token' : 'Token…';
  return (
    <a class="token-link" href={href('/settings/tokens')} aria-current={current ? 'page' : undefined} data-testid="token-link">
      {label}
    </a>
  );
}
