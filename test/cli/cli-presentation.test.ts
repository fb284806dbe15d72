import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import { boldTitles, colorDiffMarkers, colorEnabled, styleFor } from '../../src/cli/format/colorize.js';
import { placeJob, serviceJob, startServer } from '../http/real-server.js';

const BOLD = '\x1b[1m';

async function cli(args: string[], opts: { env?: NodeJS.ProcessEnv; tty?: boolean } = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['node', 'caravan', ...args], {
    stdout: { write: (s: string) => (out += s), ...(opts.tty ? { isTTY: true } : {}) },
    stderr: { write: (s: string) => (err += s) },
    env: opts.env ?? {},
    cwd: process.cwd(),
  });
  return { code, out, err };
}

test('colour is on for a terminal only, off with -no-color or NOMAD_CLI_NO_COLOR, forced with -force-color', () => {
  const tty = { stdout: { write: () => true, isTTY: true }, env: {} };
  const pipe = { stdout: { write: () => true }, env: {} };
  const rows: { name: string; ctx: typeof tty | typeof pipe; flags: { color?: boolean; forceColor?: boolean }; env?: NodeJS.ProcessEnv; want: boolean }[] = [
    { name: 'terminal', ctx: tty, flags: {}, want: true },
    { name: 'pipe', ctx: pipe, flags: {}, want: false },
    { name: '-no-color', ctx: tty, flags: { color: false }, want: false },
    { name: 'NOMAD_CLI_NO_COLOR', ctx: { ...tty, env: { NOMAD_CLI_NO_COLOR: '1' } }, flags: {}, want: false },
    { name: '-force-color into a pipe', ctx: pipe, flags: { forceColor: true }, want: true },
  ];
  for (const r of rows) assert.equal(colorEnabled(r.ctx, r.flags), r.want, r.name);
  const style = styleFor(tty, {});
  assert.equal(boldTitles('Summary\nSummary x\nAllocations', style, ['Summary', 'Allocations']), `${BOLD}Summary\x1b[0m\nSummary x\n${BOLD}Allocations\x1b[0m`);
  assert.equal(
    colorDiffMarkers('+/- Job: "web"\n+/- Task Group: "g"\n  + Task: "new"\n  - Task: "old"\n    Count: "1"', style),
    '\x1b[93m+/-\x1b[0m Job: "web"\n\x1b[93m+/-\x1b[0m Task Group: "g"\n  \x1b[32m+\x1b[0m Task: "new"\n  \x1b[31m-\x1b[0m Task: "old"\n    Count: "1"',
  );
  assert.equal(colorDiffMarkers('+ x', styleFor(pipe, {})), '+ x');
});

test('job status bolds its section titles on a terminal and prints none with -no-color', async () => {
  const sut = await startServer();
  await sut.app.listen({ host: '127.0.0.1', port: 0 });
  const address = `http://127.0.0.1:${(sut.app.server.address() as { port: number }).port}`;
  try {
    await placeJob(sut.server, serviceJob('web', 1));
    const coloured = await cli(['job', 'status', 'web'], { env: { CARAVAN_ADDR: address }, tty: true });
    assert.equal(coloured.code, 0, coloured.err);
    assert.ok(coloured.out.includes(`${BOLD}Allocations\x1b[0m\n`), coloured.out);
    for (const args of [['job', 'status', '-no-color', 'web'], ['job', 'status', 'web']]) {
      const env = args.includes('-no-color') ? { CARAVAN_ADDR: address } : { CARAVAN_ADDR: address, NOMAD_CLI_NO_COLOR: '1' };
      const plain = await cli(args, { env, tty: true });
      assert.equal(plain.code, 0, plain.err);
      assert.ok(!plain.out.includes('\x1b['), args.join(' '));
    }
    // Piped (not a terminal): no escapes either.
    assert.ok(!(await cli(['job', 'status', 'web'], { env: { CARAVAN_ADDR: address } })).out.includes('\x1b['));
  } finally {
    await sut.close();
  }
});

test('help writes flags as Nomad does (-flag) and the top level lists the shortcuts', async () => {
  const top = await cli(['-help']);
  assert.equal(top.code, 0);
  for (const [short, full] of [['run', 'job run'], ['stop', 'job stop'], ['plan', 'job plan'], ['exec', 'alloc exec'], ['logs', 'alloc logs'], ['fs', 'alloc fs']]) {
    assert.match(top.out, new RegExp(`\\n  ${short} +same as "${full}"\\n`));
  }
  const sub = await cli(['job', 'status', '-help']);
  assert.equal(sub.code, 0);
  assert.match(sub.out, /\n {2}-address <url> /);
  assert.match(sub.out, /\n {2}-no-color /);
  assert.match(sub.out, /\n {2}-h, -help /);
  assert.doesNotMatch(sub.out, / --[a-z]/);
  const unknown = await cli(['job', 'status', '-nope']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /unknown option '-nope'\n\(run with -help for usage\)/);
});
