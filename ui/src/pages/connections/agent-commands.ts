/** The command line of each job system's agent for a new connection's key. */

/** Each job system's agent, run from a clone of the repository, and how it reaches the job system. */
export const AGENTS = {
  Celery: 'jobwatch-celery \\\n  --broker redis://localhost:6379/0',
  BullMQ: 'node agents/bullmq/bin/jobwatch-bullmq.js \\\n  --redis redis://localhost:6379',
  Sidekiq: 'ruby agents/sidekiq/bin/jobwatch-sidekiq \\\n  --redis redis://localhost:6379/0',
};
export type JobSystem = keyof typeof AGENTS;

/** The agent finds its connection from the key: the command needs no connection id. */
export function agentCommand(system: JobSystem, apiKey: string, origin: string): string {
  return `${AGENTS[system]} \\\n  --url ${origin} \\\n  --api-key ${apiKey}`;
}
