/** A modal question (native <dialog>: focus is trapped and Escape cancels). */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function ConfirmDialog(props: { title: string; confirmLabel: string; danger?: boolean; onConfirm: () => void; onCancel: () => void; children?: ComponentChildren }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="dialog" onCancel={props.onCancel} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{props.title}</h2>
      {props.children}
      <div class="row end">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class={props.danger ? 'danger' : 'primary'} onClick={props.onConfirm} autofocus>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
