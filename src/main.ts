/** Process entry: `bun run start`. */
import { ConfigError, loadConfig } from './config.ts';
import { logLineTo } from './logging/log-line.ts';
import { createLogger } from './logging/logger.ts';
import { startService } from './server.ts';
import { ensureUiBuilt } from './ui-build.ts';

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    // before the logger exists: its own settings may be what is wrong
    console.error(`configuration error: ${error.message}`);
    process.exit(2);
  }
  throw error;
}

const logger = createLogger({ format: config.logFormat, level: config.logLevel, production: config.production });
const log = logLineTo(logger);

try {
  await ensureUiBuilt(log);
  const service = await startService(config, log);
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: shutting down (snapshot, sync, unlock)`, { signal });
    service.stop().then(
      () => process.exit(0),
      (error) => {
        log(`shutdown failed: ${String(error)}`, { severity: 'error' });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  log(`could not start: ${error instanceof Error ? error.message : String(error)}`, { severity: 'fatal' });
  process.exit(1);
}
