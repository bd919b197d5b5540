/**
 * SQLITE_MMAP_MB: off by default, and when set every connection of the store reads through a
 * memory map of that size, and reads and writes give the same data as without it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { openStore } from '../../src/store/open';

test('SQLITE_MMAP_MB is read as megabytes and is 0 (off) by default', () => {
  assert.equal(loadConfig({}).database.sqliteMmapBytes, 0);
  assert.equal(loadConfig({ SQLITE_MMAP_MB: '64' }).database.sqliteMmapBytes, 64 * 1024 * 1024);
  assert.throws(() => loadConfig({ SQLITE_MMAP_MB: '-1' }), /SQLITE_MMAP_MB/);
});

for (const mmapMb of [0, 64]) {
  test(`a store with SQLITE_MMAP_MB=${mmapMb} maps that much on its reader and writer connections`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-mmap-'));
    const file = path.join(dir, 'catalogue.db');
    const store = openStore(`sqlite:${file}`, { sqliteMmapBytes: mmapMb * 1024 * 1024 });
    try {
      await store.migrate();
      await store.writeDirectory((tx) => tx.run(`INSERT INTO accounts (user_name, password_hash, created_at) VALUES (?, ?, ?)`, ['mmap', 'x', 1]));
      // The setting as each kind of connection sees it: a directory read (a reader) and a write.
      const readerSetting = await store.directory.get<{ mmap_size: number | bigint }>('PRAGMA mmap_size');
      const writerSetting = await store.writeDirectory((tx) => tx.get<{ mmap_size: number | bigint }>('PRAGMA mmap_size'));
      assert.equal(Number(readerSetting?.mmap_size), mmapMb * 1024 * 1024);
      assert.equal(Number(writerSetting?.mmap_size), mmapMb * 1024 * 1024);
      const row = await store.directory.get<{ user_name: string }>('SELECT user_name FROM accounts WHERE user_name = ?', ['mmap']);
      assert.equal(row?.user_name, 'mmap');
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
