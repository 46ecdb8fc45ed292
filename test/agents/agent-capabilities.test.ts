/**
 * The BullMQ agent reports a support for every command type the service knows (supported, or
 * unsupported with the reason the dashboard shows), so a type added to the service cannot
 * be missing from the agent's report. The agent's own tests (agents/bullmq/test/, under
 * node) check the reasons; only this comparison needs the service's list.
 */
import { describe, expect, test } from 'bun:test';
import { COMMAND_TYPES } from '../../actors/connection/command-types.ts';
import { bullmqControls } from '../../agents/bullmq/src/capabilities.js';

describe("the BullMQ agent's capabilities", () => {
  test('name every command type jobwatch knows, and no other', () => {
    for (const globalConcurrency of [true, false]) expect(Object.keys(bullmqControls(globalConcurrency)).sort()).toEqual([...COMMAND_TYPES].sort());
  });
});
