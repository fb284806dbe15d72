/**
 * An interactive terminal in a running task: xterm.js over the exec websocket
 * (/v1/client/allocation/:id/exec, Nomad's JSON frames, tty=true), resized with the window.
 * xterm.js is loaded only on this page, so the other pages stay small.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ExecInputFrame, ExecOutputFrame } from '../../../src/http/exec/exec-frames.js';
import { withQuery } from '../lib/api.js';
import { seg, shortId } from '../lib/format.js';
import { base64ToBytes, bytesToBase64 } from '../lib/job-api.js';
import { href } from '../lib/router.js';

type Phase = { kind: 'idle' } | { kind: 'connecting' } | { kind: 'open' } | { kind: 'exited'; code: number } | { kind: 'error'; message: string };

export function ExecTerminalPage({ alloc, task }: { alloc: string; task: string }) {
  const [command, setCommand] = useState('/bin/sh');
  const [session, setSession] = useState(0);
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (session === 0 || !box.current) return;
    let disposed = false;
    let cleanup = (): void => {};
    setPhase({ kind: 'connecting' });
    void (async () => {
      const [{ Terminal }, { FitAddon }] = await Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit'), import('@xterm/xterm/css/xterm.css')]);
      if (disposed || !box.current) return;
      const term = new Terminal({ cursorBlink: true, convertEol: false, fontSize: 14, screenReaderMode: false });
      const fit = new FitAddon();
      term.loadAddon(fit);
      term.open(box.current);
      fit.fit();
      term.focus();
      const argv = command.trim().split(/\s+/).filter(Boolean);
      const url = new URL(withQuery(`/v1/client/allocation/${encodeURIComponent(alloc)}/exec`, { task, tty: true, command: JSON.stringify(argv) }), location.href);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      const ws = new WebSocket(url);
      const send = (f: ExecInputFrame) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(f));
      const sendSize = () => send({ tty_size: { height: term.rows, width: term.cols } });
      const enc = new TextEncoder();
      ws.onopen = () => {
        setPhase({ kind: 'open' });
        sendSize();
      };
      ws.onmessage = (ev) => {
        const f = JSON.parse(String(ev.data)) as ExecOutputFrame;
        if (f.stdout?.data) term.write(base64ToBytes(f.stdout.data));
        if (f.stderr?.data) term.write(base64ToBytes(f.stderr.data));
        if (f.exited) {
          const code = f.result?.exit_code ?? 0;
          term.write(`\r\n[exited with code ${code}]\r\n`);
          setPhase({ kind: 'exited', code });
        }
      };
      ws.onerror = () => setPhase({ kind: 'error', message: 'the exec connection failed (is the task running?)' });
      ws.onclose = (ev) => {
        setPhase((p) => (p.kind === 'exited' || p.kind === 'error' ? p : ev.code === 1000 ? { kind: 'exited', code: 0 } : { kind: 'error', message: `connection closed (${ev.code}${ev.reason ? `: ${ev.reason}` : ''})` }));
      };
      const onData = term.onData((d) => send({ stdin: { data: bytesToBase64(enc.encode(d)) } }));
      const onResize = term.onResize(() => sendSize());
      const ro = new ResizeObserver(() => fit.fit());
      ro.observe(box.current);
      // Keeps idle sessions open through proxies, as Nomad's client does.
      const heartbeat = setInterval(() => send({}), 10_000);
      cleanup = () => {
        clearInterval(heartbeat);
        ro.disconnect();
        onData.dispose();
        onResize.dispose();
        ws.close();
        term.dispose();
      };
    })().catch((err: Error) => setPhase({ kind: 'error', message: err.message }));
    return () => {
      disposed = true;
      cleanup();
    };
  }, [session]);

  return (
    <section aria-labelledby="exec-title">
      <p class="crumbs">
        <a href={href(`/allocations/${alloc}`)}>Allocation {shortId(alloc)}</a> / <a href={href(`/allocations/${alloc}/${seg(task)}/logs`)}>{task}</a>
      </p>
      <h1 id="exec-title">Exec in {task}</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setSession((s) => s + 1);
        }}
      >
        <label>
          Command{' '}
          <input type="text" value={command} onInput={(e) => setCommand(e.currentTarget.value)} style={{ width: '16em' }} />
        </label>
        <button type="submit" class="primary">
          {session === 0 ? 'Connect' : 'Reconnect'}
        </button>
        <span role="status" class="muted" data-testid="exec-status">
          {phase.kind === 'connecting' ? 'Connecting…' : phase.kind === 'open' ? 'Connected' : phase.kind === 'exited' ? `Exited with code ${phase.code}` : phase.kind === 'error' ? '' : 'Not connected'}
        </span>
      </form>
      {phase.kind === 'error' && (
        <div class="state error" role="alert">
          {phase.message}
        </div>
      )}
      <div class="terminal" ref={box} data-testid="terminal" aria-label="Terminal" />
    </section>
  );
}
