/** Process entry: `bun run start`. */
import { ConfigError, loadConfig } from './config.ts';
import { startService } from './server.ts';
import { ensureUiBuilt } from './ui-build.ts';

const log = (line: string): void => console.log(`${new Date().toISOString()} ${line}`);

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`configuration error: ${error.message}`);
    process.exit(2);
  }
  throw error;
}

try {
  await ensureUiBuilt(log);
  const service = await startService(config, log);
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: shutting down (snapshot, sync, unlock)`);
    service.stop().then(
      () => process.exit(0),
      (error) => {
        log(`shutdown failed: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  console.error(`could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
