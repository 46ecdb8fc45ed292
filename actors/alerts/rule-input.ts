/**
 * The checks a rule's fields must pass beyond their types: which of queue, task and
 * threshold each kind takes, the threshold's range, and the window. One message per
 * field, as the interface's `details`.
 */
import { DomainError, type FieldErrors } from '../domain-error.ts';
import { ALERT_LIMITS, KIND_FIELDS, type RuleInput } from './alert-model.ts';

export type { RuleInput };

/** Throws VALIDATION_ERROR naming every field that does not fit the kind. */
export function checkRuleInput(input: RuleInput): void {
  const errors: FieldErrors = {};
  const add = (field: string, message: string): void => void (errors[field] ??= []).push(message);
  const fields = KIND_FIELDS[input.kind];
  if (fields.queue === 'refused' && input.queue !== null) add('queue', `a ${input.kind} rule does not take a queue`);
  if (fields.task === 'refused' && input.task !== null) add('task', `a ${input.kind} rule does not take a task`);
  if (fields.task === 'required' && input.task === null) add('task', `a ${input.kind} rule names the task it watches`);
  if (fields.includePaused === 'refused' && input.includePaused) add('includePaused', `a ${input.kind} rule does not look at whether queues are paused`);
  if (fields.threshold === 'refused' && input.threshold !== null) add('threshold', `a ${input.kind} rule has no threshold: its window is the limit`);
  const relativeTo = input.relativeTo ?? null;
  if (fields.relativeTo === 'refused' && relativeTo !== null) add('relativeTo', `a ${input.kind} rule compares with its threshold only`);
  if (fields.threshold === 'required') {
    const threshold = input.threshold;
    if (threshold === null) add('threshold', `a ${input.kind} rule needs a threshold`);
    else if (input.kind === 'failure_rate' && !(threshold >= 0 && threshold < 1)) add('threshold', 'a failure rate threshold is a fraction from 0 up to (not including) 1');
    else if (input.kind === 'queue_depth' && !(Number.isInteger(threshold) && threshold >= 0 && threshold <= ALERT_LIMITS.depthThresholdMax)) {
      add('threshold', `a queue depth threshold is a whole number from 0 to ${ALERT_LIMITS.depthThresholdMax}`);
    } else if (input.kind === 'runtime_percentile' && relativeTo === null && !(Number.isInteger(threshold) && threshold >= 1 && threshold <= ALERT_LIMITS.depthThresholdMax)) {
      add('threshold', `a run time threshold is a whole number of milliseconds from 1 to ${ALERT_LIMITS.depthThresholdMax}`);
    } else if (input.kind === 'runtime_percentile' && relativeTo !== null && !(threshold > 1 && threshold <= ALERT_LIMITS.runtimeRatioMax)) {
      add('threshold', `against the week before, the threshold is how many times slower: more than 1, at most ${ALERT_LIMITS.runtimeRatioMax}`);
    }
  }
  if (input.kind === 'runtime_percentile' && input.windowSeconds < ALERT_LIMITS.runtimeWindowSecondsMin) {
    add('windowSeconds', `a run time percentile is kept by the minute: the window is at least ${ALERT_LIMITS.runtimeWindowSecondsMin} s`);
  }
  const { windowSecondsMin, windowSecondsMax } = ALERT_LIMITS;
  if (!Number.isInteger(input.windowSeconds) || input.windowSeconds < windowSecondsMin || input.windowSeconds > windowSecondsMax) {
    add('windowSeconds', `must be a whole number of seconds from ${windowSecondsMin} to ${windowSecondsMax}`);
  }
  if (new Set(input.channelIds).size !== input.channelIds.length) add('channelIds', 'names a channel twice');
  if (input.channelIds.length > ALERT_LIMITS.channelsPerRuleMax) add('channelIds', `at most ${ALERT_LIMITS.channelsPerRuleMax} channels`);
  if (Object.keys(errors).length > 0) throw new DomainError('VALIDATION_ERROR', 'request failed validation', errors);
}
