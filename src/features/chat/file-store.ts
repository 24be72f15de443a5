import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The book's file store: files a client dropped in chat, kept under the data directory as
// files/<space>/contacts/<contact>/<sha256>. Named by content, so a file fetched twice (two
// processes racing on one update) is one file, and a name can never climb out of the store.

export type FileStore = {
  put(spaceId: string, contactId: string, bytes: Uint8Array): Promise<{ sha256: string }>;
  get(spaceId: string, contactId: string, sha256: string): Promise<Buffer>;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** With an in-memory database (tests, a throwaway demo) the files go to the system's temp directory. */
export function fileStoreRoot(dataDir: string): string {
  return dataDir.startsWith('memory://') ? join(tmpdir(), 'tollbook-files') : join(dataDir, 'files');
}

export function createFileStore(root: string): FileStore {
  const folder = (spaceId: string, contactId: string) => {
    if (!UUID.test(spaceId) || !UUID.test(contactId)) throw new Error('The file store takes ids only.');
    return join(root, spaceId, 'contacts', contactId);
  };
  return {
    async put(spaceId, contactId, bytes) {
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const dir = folder(spaceId, contactId);
      await mkdir(dir, { recursive: true });
      // Written aside and renamed, so a reader never sees half a file.
      const aside = join(dir, `.${randomUUID()}.part`);
      await writeFile(aside, bytes, { mode: 0o600 });
      await rename(aside, join(dir, sha256));
      return { sha256 };
    },
    async get(spaceId, contactId, sha256) {
      if (!SHA256.test(sha256)) throw new Error('The file store takes a SHA-256 name.');
      return readFile(join(folder(spaceId, contactId), sha256));
    },
  };
}
