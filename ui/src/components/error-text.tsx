/** An API error in words: the envelope's message, announced to screen readers. */
import { messageOf } from '../api/client.ts';

export function ErrorText({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p class="error" role="alert">
      {messageOf(error)}
    </p>
  );
}
