/**
 * A button that runs an API action: disabled while it runs, an optional second click to
 * confirm destructive actions, and the API's error message shown beside it.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

export function ActionButton(props: {
  label: string;
  run: () => Promise<unknown>;
  confirm?: string;
  danger?: boolean;
  primary?: boolean;
  disabled?: boolean;
  /** The capability the signed-in token lacks for this action: the button is disabled and says so. */
  deniedBy?: string | undefined;
  onDone?: (result: unknown) => void;
  children?: ComponentChildren;
}) {
  const [state, setState] = useState<'idle' | 'confirm' | 'busy'>('idle');
  const [error, setError] = useState<string | undefined>(undefined);
  const go = async () => {
    if (props.confirm && state !== 'confirm') {
      setState('confirm');
      return;
    }
    setState('busy');
    setError(undefined);
    try {
      const res = await props.run();
      props.onDone?.(res);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setState('idle');
    }
  };
  const cls = props.danger ? 'danger' : props.primary ? 'primary' : '';
  return (
    <span class="action">
      <button
        type="button"
        class={cls}
        disabled={props.disabled || props.deniedBy !== undefined || state === 'busy'}
        title={props.deniedBy ? `Your token lacks the ${props.deniedBy} capability` : undefined}
        data-denied={props.deniedBy}
        onClick={() => void go()}
      >
        {state === 'confirm' ? props.confirm : state === 'busy' ? `${props.label}…` : props.label}
      </button>
      {state === 'confirm' && (
        <button type="button" onClick={() => setState('idle')}>
          Cancel
        </button>
      )}
      {error && (
        <span class="state error inline" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
