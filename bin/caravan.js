#!/usr/bin/env node
// The caravan command: runs the compiled CLI (npm install builds it through the prepare script).
import { main } from '../dist/src/cli/main.js';
import { exitQuietlyOnClosedPipe } from '../dist/src/cli/closed-pipe.js';

exitQuietlyOnClosedPipe(process.stdout);
exitQuietlyOnClosedPipe(process.stderr);

main(process.argv).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.stack ?? err.message : String(err)); process.exitCode = 1; },
);
