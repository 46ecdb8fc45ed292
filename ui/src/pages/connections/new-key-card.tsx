/** The API key of a new connection, shown this once, with the command of the agent for its job system. */
import { useSignal } from '@preact/signals';
import type { CreatedConnection } from '../../api/types.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { ShownOnce } from '../../components/shown-once.tsx';
import { AGENTS, agentCommand, type JobSystem } from './agent-commands.ts';

export function NewKeyCard({ created, onDismiss }: { created: CreatedConnection; onDismiss: () => void }) {
  const system = useSignal<JobSystem>('Celery');
  const command = agentCommand(system.value, created.apiKey, location.origin);
  return (
    <ShownOnce
      title={`API key of ${created.connection.name}`}
      secret={created.apiKey}
      what="key"
      testId="api-key"
      note="Only its hash is stored; to replace a lost key, delete the connection and create a new one."
      onDismiss={onDismiss}
    >
      <div class="tabs" role="group" aria-label="Job system">
        {(Object.keys(AGENTS) as JobSystem[]).map((each) => (
          <button key={each} type="button" class="tab" aria-pressed={each === system.value} onClick={() => (system.value = each)}>
            {each}
          </button>
        ))}
      </div>
      <p>
        Run the agent beside the job system (it sends events and carries out revoke and retry)
        {system.value === 'Sidekiq' && <>, once Sidekiq loads <code>Jobwatch::Sidekiq.install!</code></>}:
      </p>
      <div class="code-block">
        <CopyButton text={command} />
        <pre data-testid="agent-command">{command}</pre>
      </div>
    </ShownOnce>
  );
}
