/** The API key of a new connection, shown this once, with the agent command that uses it. */
import type { CreatedConnection } from '../../api/types.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { ShownOnce } from '../../components/shown-once.tsx';

export function agentCommand(created: CreatedConnection, origin: string): string {
  return [
    'jobwatch-celery \\',
    `  --url ${origin} \\`,
    `  --api-key ${created.apiKey} \\`,
    `  --connection-id ${created.connection.id} \\`,
    '  --broker redis://localhost:6379/0',
  ].join('\n');
}

export function NewKeyCard({ created, onDismiss }: { created: CreatedConnection; onDismiss: () => void }) {
  const command = agentCommand(created, location.origin);
  return (
    <ShownOnce
      title={`API key of ${created.connection.name}`}
      secret={created.apiKey}
      what="key"
      testId="api-key"
      note="Only its hash is stored; to replace a lost key, delete the connection and create a new one."
      onDismiss={onDismiss}
    >
      <p>Run the Celery agent next to your workers (it sends events and carries out revoke and retry):</p>
      <div class="code-block">
        <CopyButton text={command} />
        <pre>{command}</pre>
      </div>
    </ShownOnce>
  );
}
