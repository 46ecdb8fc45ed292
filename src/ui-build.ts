/**
 * The dashboard's build, as the service runs it: at start when its files are missing (a
 * clone started with `bun src/main.ts`), and as `npm start`'s prestart step (`bun
 * src/ui-build.ts`), which rebuilds it before every start. Both report through the service's
 * logger, so under NODE_ENV=production (or LOG_FORMAT=json) the build's lines are JSON records
 * like every other line a log shipper reads.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildUi, UI_DIST_DIR } from '../ui/build.ts';
import { loadConfig, type LogFormatSetting, type LogLevel } from './config.ts';
import { logLineTo } from './logging/log-line.ts';
import { createLogger } from './logging/logger.ts';

export async function ensureUiBuilt(log: (line: string) => void): Promise<void> {
  if (existsSync(join(UI_DIST_DIR, 'manifest.json'))) return;
  log('dashboard not built yet: building it');
  await buildUi(log);
}

/**
 * The log settings of the service about to start. A configuration the service will refuse
 * is not the build's to report (the service says what is wrong, with exit code 2): the build
 * then logs as `LOG_FORMAT=auto` would.
 */
function logSettings(env: NodeJS.ProcessEnv): { format: LogFormatSetting; level: LogLevel; production: boolean } {
  try {
    const config = loadConfig(env);
    return { format: config.logFormat, level: config.logLevel, production: config.production };
  } catch {
    return { format: 'auto', level: 'info', production: env.NODE_ENV === 'production' };
  }
}

if (import.meta.main) {
  const log = logLineTo(createLogger(logSettings(process.env)));
  try {
    await buildUi(log);
  } catch (error) {
    log(`dashboard build failed: ${error instanceof Error ? error.message : String(error)}`, { severity: 'fatal' });
    process.exit(1);
  }
}
