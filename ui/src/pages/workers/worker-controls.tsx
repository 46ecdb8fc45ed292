/**
 * A worker's controls on its row: quiet (it takes no new jobs) and stop (it shuts down),
 * each offered where its job system can do it and disabled with the reason elsewhere
 * (BullMQ's workers take no commands from outside); stop asks first. The worker's latest
 * command and what became of it shows under them.
 */
import { useSignal } from '@preact/signals';
import type { WorkerCommandType } from '../../../../actors/connection/command-types.ts';
import { askControl } from '../../api/controls.ts';
import type { WorkerView } from '../../api/types.ts';
import { CommandList } from '../../components/command-list.tsx';
import { ConfirmDialog } from '../../components/confirm-dialog.tsx';
import { ErrorText } from '../../components/error-text.tsx';
import { whyNotOnConnection } from '../../lib/roles.ts';

const CONTROLS: Array<{ type: WorkerCommandType; path: string; label: string; says: string }> = [
  { type: 'worker.quiet', path: 'quiet', label: 'Quiet', says: 'It finishes the jobs it runs and takes no new ones; it stays up until it is stopped.' },
  { type: 'worker.stop', path: 'stop', label: 'Stop', says: 'It shuts down as its job system does on a stop signal: the running jobs get their shutdown time, then it exits.' },
];

export function WorkerControls({ worker }: { worker: WorkerView }) {
  const asking = useSignal<(typeof CONTROLS)[number] | null>(null);
  const error = useSignal<unknown>(null);
  const send = async (control: (typeof CONTROLS)[number]) => {
    asking.value = null;
    error.value = null;
    try {
      await askControl(`${control.label} ${worker.hostname}${worker.pid === null ? '' : ` (pid ${worker.pid})`}`, `/api/workers/${encodeURIComponent(worker.id)}/${control.path}`);
    } catch (failure) {
      error.value = failure;
    }
  };
  // the role first: an operator of the worker's team controls it, a viewer is told why not
  const roleWhyNot = whyNotOnConnection(worker.connectionId, 'operator', 'control workers');
  return (
    <div class="row-actions">
      {CONTROLS.map((control) => {
        const { available, reason } = roleWhyNot === null ? worker.controls[control.type] : { available: false, reason: roleWhyNot };
        return (
          <button key={control.type} type="button" class={`small${control.type === 'worker.stop' ? ' danger' : ''}`} disabled={!available} title={reason ?? control.says} onClick={() => (control.type === 'worker.stop' ? (asking.value = control) : void send(control))}>
            {control.label}
          </button>
        );
      })}
      <CommandList commands={worker.commands} limit={1} />
      <ErrorText error={error.value} />
      {asking.value && (
        <ConfirmDialog title={`${asking.value.label} ${worker.hostname}?`} confirmLabel={asking.value.label} danger onConfirm={() => void send(asking.value!)} onCancel={() => (asking.value = null)}>
          <p>
            <code>{worker.externalId}</code>: {asking.value.says}
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
