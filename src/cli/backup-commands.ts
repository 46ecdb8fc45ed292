/**
 * `backup` and `restore`: they do not open the data directory. `backup` asks the running
 * service (POST /api/admin/backup as an admin) for a consistent snapshot, so it works while
 * the service runs and ingests; `restore` places a verified backup as the only file of a
 * new data directory, from which the service recovers like from any snapshot.
 */
import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { DomainError } from '../../actors/domain-error.ts';
import { snapshotFileName } from '../../persistence/file-names.ts';
import { FileStorage } from '../../persistence/file-storage.ts';
import { openPrivate, PRIVATE_DIR_MODE } from '../../persistence/private-files.ts';
import { readSnapshotFileAnyName } from '../../persistence/snapshot-file.ts';
import type { Config } from '../config.ts';
import type { Flags } from './commands.ts';

export const BACKUP_USAGE = `  backup <dir> [--url URL] [--email EMAIL] [--password PASSWORD]
      asks the running service for a consistent backup and writes it into <dir>
      (URL defaults to http://127.0.0.1:$PORT; email and password to ADMIN_EMAIL and ADMIN_PASSWORD)
  restore <backup file> [--data-dir DIR]     DIR (default DATA_DIR) must be empty or absent`;

export async function backupCommand(config: Config, targetDir: string | undefined, flags: Flags, env = process.env): Promise<string> {
  if (targetDir === undefined) throw new DomainError('VALIDATION_ERROR', `backup needs a target directory\n\n${BACKUP_USAGE}`);
  const baseUrl = (typeof flags.url === 'string' ? flags.url : `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
  const email = typeof flags.email === 'string' ? flags.email : env.ADMIN_EMAIL;
  const password = typeof flags.password === 'string' ? flags.password : env.ADMIN_PASSWORD;
  if (!email || !password) throw new DomainError('VALIDATION_ERROR', `backup needs an admin's --email and --password (or ADMIN_EMAIL and ADMIN_PASSWORD)`);

  const login = await call(baseUrl, '/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const response = await call(baseUrl, '/api/admin/backup', { method: 'POST', headers: { cookie } });
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'backup.snap';

  // A backup holds what the data directory holds: private like it (an existing target directory is the operator's choice).
  await mkdir(targetDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const finalPath = join(targetDir, name);
  const partialPath = `${finalPath}.partial`;
  const file = await openPrivate(partialPath, 'w');
  let bytes = 0;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      await file.write(chunk);
      bytes += chunk.byteLength;
    }
    await file.datasync();
  } finally {
    await file.close();
  }
  const verified = await readSnapshotFileAnyName(new FileStorage(), partialPath);
  if (verified.kind !== 'ok') throw new DomainError('SERVICE_UNAVAILABLE', `the backup received is damaged (${verified.reason}); ${partialPath} kept for inspection`);
  await rename(partialPath, finalPath);
  return `backup of seq ${verified.seq} (${bytes} bytes) written to ${finalPath}`;
}

export async function restoreCommand(config: Config, backupPath: string | undefined, flags: Flags): Promise<string> {
  if (backupPath === undefined) throw new DomainError('VALIDATION_ERROR', `restore needs a backup file\n\n${BACKUP_USAGE}`);
  const dataDir = typeof flags['data-dir'] === 'string' ? flags['data-dir'] : config.dataDir;
  const storage = new FileStorage();
  const backup = await readSnapshotFileAnyName(storage, backupPath).catch((error: unknown) => ({ kind: 'corrupt' as const, reason: String(error) }));
  if (backup.kind !== 'ok') throw new DomainError('VALIDATION_ERROR', `${backupPath} is not a complete backup: ${backup.reason}`);
  const existing = await readdir(dataDir).catch(() => [] as string[]);
  if (existing.length > 0) throw new DomainError('CONFLICT', `${dataDir} is not empty; restore into an empty or new directory`);

  const logDir = join(dataDir, 'log');
  await storage.mkdirp(logDir);
  const finalPath = join(logDir, snapshotFileName(backup.seq));
  const tempPath = `${finalPath}.restoring`;
  const file = await storage.openAppend(tempPath);
  try {
    await file.append(await storage.readFile(backupPath));
    await file.datasync();
  } finally {
    await file.close();
  }
  await storage.rename(tempPath, finalPath);
  await storage.fsyncDir(logDir);
  return `restored the backup of seq ${backup.seq} into ${dataDir}; start the service with DATA_DIR=${dataDir} (everyone logs in again unless SESSION_SECRET is the same)`;
}

async function call(baseUrl: string, path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(baseUrl + path, init);
  } catch (error) {
    throw new DomainError('SERVICE_UNAVAILABLE', `no service answers at ${baseUrl} (${error instanceof Error ? error.message : String(error)}); backup needs the service running (--url to point at it)`);
  }
  if (response.ok) return response;
  const body = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
  throw new DomainError('SERVICE_UNAVAILABLE', `${path} answered ${response.status}: ${body?.error?.message ?? 'no message'}`);
}
