/**
 * POST /api/admin/backup: a consistent snapshot of the running service, streamed as a
 * file (the instance admin only: src/http/access-rules.ts). `npm run cli -- backup <dir>` calls it; so can curl.
 * A POST, not a GET: every call writes a full snapshot, and a GET is what a foreign page
 * can make a browser send with the session cookie (a link, an image, a navigation). As a
 * POST it passes the cross-site guard (dashboard-request-guard.ts) like every other write.
 */
import { Elysia } from 'elysia';
import type { AppDeps } from '../app-deps.ts';
import { discardBackup, type BackupFile } from '../backup/write-backup.ts';

export function adminBackupRoutes({ backup }: AppDeps) {
  return new Elysia({ name: 'admin-backup' }).post(
    '/api/admin/backup',
    async () => {
      const file = await backup();
      return new Response(streamThenDiscard(file), {
        headers: {
          'content-type': 'application/octet-stream',
          'content-disposition': `attachment; filename="${file.name}"`,
          'content-length': String(file.bytes),
          'x-backup-seq': String(file.seq),
        },
      });
    },
    // Stryker disable next-line ObjectLiteral,StringLiteral: the route takes no body; 'none' keeps Elysia from reading one
    { parse: 'none' },
  );
}

/** The staged file is removed once sent, or once the client goes away. */
function streamThenDiscard(file: BackupFile): ReadableStream<Uint8Array> {
  const reader = Bun.file(file.path).stream().getReader();
  const discard = (): void => void discardBackup(file).catch(() => undefined);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          discard();
        } else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
        discard();
      }
    },
    cancel() {
      void reader.cancel().catch(() => undefined);
      discard();
    },
  });
}
