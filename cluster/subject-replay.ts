/**
 * Reading a partition's subject back: its last stream sequence, and its messages from a
 * sequence to another with an ordered consumer (ephemeral, no acks, restarted by the
 * client on a gap), which is how JetStream hands a reader a subject in order.
 */
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';

/** 0 when the subject holds no message. */
export async function lastSubjectSeq(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  const last = await jsm.streams.getMessage(stream, { last_by_subj: subject });
  return last?.seq ?? 0;
}

/** Calls `each` for every message of `subject` with fromSeq <= seq <= toSeq, in order. */
export async function replaySubject(
  js: JetStreamClient,
  stream: string,
  subject: string,
  fromSeq: number,
  toSeq: number,
  each: (seq: number, data: Uint8Array) => void,
): Promise<void> {
  if (fromSeq > toSeq) return;
  const consumer = await js.consumers.get(stream, {
    filter_subjects: subject,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: fromSeq,
  });
  const messages = await consumer.consume({ max_messages: 512 });
  try {
    for await (const message of messages) {
      if (message.seq > toSeq) break;
      each(message.seq, message.data);
      if (message.seq === toSeq) break;
    }
  } finally {
    await messages.close().catch(() => undefined);
  }
}
