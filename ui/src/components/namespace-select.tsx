/** The namespace the lists show, from /v1/namespaces, kept in the browser. */
import type { Watch } from '../lib/use-live.js';
import { getNamespace, setNamespace } from '../lib/api.js';
import { useLive } from '../lib/use-live.js';

const WATCH: Watch = ['Job'];

export function NamespaceSelect({ onChange }: { onChange: () => void }) {
  const live = useLive<Array<{ Name: string }>>('/v1/namespaces', WATCH);
  const current = getNamespace();
  const names = new Set(['default', ...(live.data ?? []).map((n) => n.Name)]);
  return (
    <label class="ns">
      <span class="sr-only">Namespace</span>
      <select
        value={current}
        title="Namespace"
        onChange={(e) => {
          setNamespace(e.currentTarget.value);
          onChange();
        }}
      >
        <option value="*">all namespaces</option>
        {[...names].sort().map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </label>
  );
}
