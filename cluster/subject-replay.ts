/**
 * Reading a partition's subject back: its last stream sequence, and its messages from a
 * sequence to another with an ordered consumer (ephemeral, no acks, restarted by the
 * client on a gap), which is how JetStream hands a reader a subject in order.
 *
 * Every message on a partition's subject was published fenced on the subject's previous
 * message (fenced-publisher.ts), and JetStream stores that header with it: a reader
 * compares it with the last sequence it applied to tell a purge it fell behind from the
 * next message (an ordered consumer silently starts at the first message still stored).
 */
import { DeliverPolicy, PubHeaders, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { TurnSlices } from '../persistence/turn-slices.ts';

/** One message of a subject as the readers see it. */
export interface SubjectMessage {
  subject: string;
  seq: number;
  /** The subject's sequence this message was fenced on (its predecessor); undefined when it carries no fence. */
  previousSeq: number | undefined;
  data: Uint8Array;
  /** Messages of the consumer's filter still to come after this one (as the server counted when it sent it). */
  pending: number;
}

export function subjectMessage(message: JsMsg): SubjectMessage {
  const fence = message.headers?.get(PubHeaders.ExpectedLastSubjectSequenceHdr);
  const previousSeq = fence === undefined || fence === '' ? undefined : Number(fence);
  return { subject: message.subject, seq: message.seq, previousSeq, data: message.data, pending: message.info.pending };
}

/** The subject's last message, its sequence and the message id it was published with; null when it holds none. */
export async function lastSubjectMessage(jsm: JetStreamManager, stream: string, subject: string): Promise<{ seq: number; msgID: string | null } | null> {
  const last = await jsm.streams.getMessage(stream, { last_by_subj: subject });
  if (last === null) return null;
  const msgID = last.header?.get(PubHeaders.MsgIdHdr);
  return { seq: last.seq, msgID: msgID === undefined || msgID === '' ? null : msgID };
}

/** 0 when the subject holds no message. */
export async function lastSubjectSeq(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  const last = await jsm.streams.getMessage(stream, { last_by_subj: subject });
  return last?.seq ?? 0;
}

/**
 * Calls `each` for every message of `subject` with fromSeq <= seq <= toSeq, in order, with a
 * turn of the event loop every few milliseconds: the messages arrive in batches, and applying
 * a batch back to back would hold off timers (lease renewals, the membership key) for as long
 * as a large partition takes to replay.
 */
export async function replaySubject(
  js: JetStreamClient,
  stream: string,
  subject: string,
  fromSeq: number,
  toSeq: number,
  each: (message: SubjectMessage) => void,
): Promise<void> {
  if (fromSeq > toSeq) return;
  const consumer = await js.consumers.get(stream, {
    filter_subjects: subject,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: fromSeq,
  });
  const messages = await consumer.consume({ max_messages: 512 });
  const slices = new TurnSlices();
  try {
    for await (const message of messages) {
      if (message.seq > toSeq) break;
      each(subjectMessage(message));
      if (message.seq === toSeq) break;
      await slices.next();
    }
  } finally {
    await messages.close().catch(() => undefined);
  }
}
