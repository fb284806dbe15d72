import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLogBackend } from '../../src/server/log/sqlite-log-backend.js';
import { runLogConformance } from './log-conformance.js';

runLogConformance({
  name: 'sqlite (embedded)',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-log-'));
    return {
      backend: SqliteLogBackend.open(dir),
      reopen: async () => SqliteLogBackend.open(dir),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
});
