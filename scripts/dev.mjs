// `npm run dev`: start a dev agent (server + client in one process), wait until it answers,
// submit the example job, then keep the agent in the foreground until Ctrl-C.
// CARAVAN_ADDR (default http://127.0.0.1:4646) sets the address the agent listens on.
import { spawn, spawnSync } from 'node:child_process';

const addr = process.env.CARAVAN_ADDR ?? 'http://127.0.0.1:4646';
const port = new URL(addr).port || '4646';
const example = process.argv[2] ?? 'examples/service.hcl';
// The agent runs in its own process group, so a Ctrl-C reaches it once, from here: a terminal
// signals the whole foreground group (and npm forwards it again), and an agent that gets a
// second signal during its graceful shutdown exits at once, leaving its tasks behind.
const agent = spawn(process.execPath, ['bin/caravan.js', 'agent', '-dev', '-http-port', port], { stdio: 'inherit', detached: true });
let forwarded = false;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (forwarded) return;
    forwarded = true;
    agent.kill(sig);
  });
}
agent.on('exit', (code) => process.exit(code ?? 0));

async function healthy() {
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(`${addr}/v1/agent/health`);
      if (r.ok) return true;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

if (await healthy()) {
  spawnSync(process.execPath, ['bin/caravan.js', 'job', 'run', example], { stdio: 'inherit', env: { ...process.env, CARAVAN_ADDR: addr } });
  console.log(`\n==> The example is running. Try: npx caravan job status web   (Ctrl-C stops the agent)`);
} else {
  console.error(`agent did not answer on ${addr}`);
}
