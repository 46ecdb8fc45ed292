/** The API key of a new connection, shown this once, with the agent command that uses it. */
import type { CreatedConnection } from '../../api/types.ts';
import { CopyButton } from '../../components/copy-button.tsx';

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
    <section class="card key-box" aria-labelledby="new-key-title">
      <h2 id="new-key-title">API key of {created.connection.name}</h2>
      <p>
        <strong>Copy it now: it is shown only this once.</strong> Only its hash is stored; to replace a lost key, delete the connection and
        create a new one.
      </p>
      <div class="row">
        <code class="mono" data-testid="api-key">
          {created.apiKey}
        </code>
        <CopyButton text={created.apiKey} label="Copy key" />
      </div>
      <p>Run the Celery agent next to your workers (it sends events and carries out revoke and retry):</p>
      <div class="code-block">
        <CopyButton text={command} />
        <pre>{command}</pre>
      </div>
      <p class="row end">
        <button type="button" onClick={onDismiss}>
          I have saved the key
        </button>
      </p>
    </section>
  );
}
