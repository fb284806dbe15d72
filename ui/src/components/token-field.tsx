/** The ACL token sent as X-Nomad-Token with every request; kept in localStorage. */
import { useState } from 'preact/hooks';
import { getToken, setToken } from '../lib/api.js';

export function TokenField({ onChange }: { onChange: () => void }) {
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState(getToken());
  const has = getToken() !== '';
  return (
    <div class="token">
      <button type="button" aria-expanded={open} aria-controls="token-form" onClick={() => setOpen(!open)}>
        {has ? 'Token set' : 'Token'}
      </button>
      {open && (
        <form
          id="token-form"
          class="popover"
          onSubmit={(e) => {
            e.preventDefault();
            setToken(value.trim());
            setOpen(false);
            onChange();
          }}
        >
          <label>
            ACL token (secret ID)
            <input type="password" autoComplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          </label>
          <p class="muted">Sent as X-Nomad-Token; kept in this browser only.</p>
          <button type="submit">Save</button>{' '}
          <button
            type="button"
            onClick={() => {
              setValue('');
              setToken('');
              setOpen(false);
              onChange();
            }}
          >
            Clear
          </button>
        </form>
      )}
    </div>
  );
}
