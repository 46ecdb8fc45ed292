#!/usr/bin/env node
// The `jobwatch-bullmq` command (the package's bin).
import { main } from '../src/agent.js';

main(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`jobwatch-bullmq: unexpected error: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
