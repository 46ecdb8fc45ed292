/** The colours of rule states and delivery outcomes, borrowed from the job and worker states' (styles.css). */
export const STATUS_CLASS: Record<string, string> = {
  ok: 'state-unknown',
  firing: 'state-failed',
  resolved: 'state-completed',
  delivered: 'state-completed',
  retrying: 'state-retrying',
  failed: 'state-failed',
};
