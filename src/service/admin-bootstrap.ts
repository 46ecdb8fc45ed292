/**
 * The first admin: made from ADMIN_EMAIL/ADMIN_PASSWORD when no admin exists, or with a
 * one-time password printed once. On a single node at start; in cluster mode by whichever
 * node writes the accounts partition, once it does (service-mode.ts decides when).
 */
import type { AccountService } from '../../actors/services/account-service.ts';
import type { Config } from '../config.ts';
import type { LogLine } from '../logging/log-line.ts';

export function firstAdminMaker(accounts: AccountService, config: Pick<Config, 'adminEmail' | 'adminPassword'>, log: LogLine): () => Promise<void> {
  return async () => {
    const admin = await accounts.ensureAdmin(config.adminEmail, config.adminPassword);
    if (admin === null) return;
    log(
      admin.generatedPassword === null
        ? `created admin ${admin.email} from ADMIN_EMAIL/ADMIN_PASSWORD`
        : `created admin ${admin.email} with one-time password: ${admin.generatedPassword}  (shown once; set ADMIN_EMAIL and ADMIN_PASSWORD before the first start to choose it)`,
    );
  };
}
