/**
 * Nomad's top-level shortcuts: `run`, `stop`, `plan`, `validate` and `inspect` are `job …`;
 * `exec`, `logs` and `fs` are `alloc …`; `action` is `job action` (`status` is its own command). Expanded in argv before
 * parsing, so each shortcut behaves exactly as the command it stands for.
 */
const ALIASES: Readonly<Record<string, readonly [string, string]>> = {
  run: ['job', 'run'],
  stop: ['job', 'stop'],
  plan: ['job', 'plan'],
  validate: ['job', 'validate'],
  inspect: ['job', 'inspect'],
  exec: ['alloc', 'exec'],
  logs: ['alloc', 'logs'],
  fs: ['alloc', 'fs'],
  action: ['job', 'action'],
};

/** argv (without node and script) with a leading shortcut replaced by its full command. */
export function expandTopLevelAlias(args: readonly string[]): string[] {
  const first = args[0];
  const full = first === undefined ? undefined : ALIASES[first];
  return full ? [...full, ...args.slice(1)] : [...args];
}

/** The "Shortcuts" section of the top-level help: each shortcut and the command it stands for. */
export function shortcutsHelp(): string {
  const width = Math.max(...Object.keys(ALIASES).map((k) => k.length));
  const lines = Object.entries(ALIASES).map(([name, full]) => `  ${name.padEnd(width)}  same as "${full.join(' ')}"`);
  return `\nShortcuts:\n${lines.join('\n')}\n`;
}
