/** A secret the service shows only in this answer (an API key, a webhook signing secret), with a copy button and an "I have saved it" dismissal. */
import type { ComponentChildren } from 'preact';
import { CopyButton } from './copy-button.tsx';

export function ShownOnce(props: { title: string; secret: string; what: string; note: ComponentChildren; testId: string; onDismiss: () => void; children?: ComponentChildren }) {
  return (
    <section class="card key-box" aria-label={props.title}>
      <h2>{props.title}</h2>
      <p>
        <strong>Copy it now: it is shown only this once.</strong> {props.note}
      </p>
      <div class="row">
        <code class="mono" data-testid={props.testId}>
          {props.secret}
        </code>
        <CopyButton text={props.secret} label={`Copy ${props.what}`} />
      </div>
      {props.children}
      <p class="row end">
        <button type="button" onClick={props.onDismiss}>
          I have saved the {props.what}
        </button>
      </p>
    </section>
  );
}
