/**
 * The shape of every snapshot chunk kind (actors/engine-snapshot.ts `SnapshotChunk`), in
 * each format this version reads, checked before a chunk is restored. Whether the job
 * columns agree with their count is job-columns.ts's check, made as they load.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { inEveryFormat, TEXT_COLUMNS, TYPED_COLUMNS } from '../connection/job-column-list.ts';
import type { SnapshotChunk } from '../engine-snapshot.ts';
import { describeValue, shapeCheck, ShapeError } from './shape-check.ts';
import {
  AlertChannelShape,
  AlertRuleShape,
  AuditEntryShape,
  MembershipShape,
  PasswordLinkShape,
  SavedViewShape,
  TeamShape,
  CapabilitiesShape,
  CommandOutcomeShape,
  ControlOutcomeShape,
  CommandShape,
  ConnectionShape,
  DeliveryAttemptShape,
  DeliveryShape,
  freeObject,
  MarkerShape,
  number,
  nullable,
  QueueShape,
  RuleStateShape,
  SessionShape,
  text,
  TransitionShape,
  UserShape,
  WorkerShape,
} from './stored-types.ts';

const bytes = () => Type.Uint8Array();
const textOrBytes = () => Type.Union([text(), bytes()]);
/** format 4 sends codes into the chunk's strings; formats 2 and 3 the texts */
const codesOrTexts = () => Type.Union([bytes(), Type.Array(nullable(text()))]);

/**
 * Job columns as any format from 2 on sends them, from the column list (job-column-list.ts):
 * a typed column as the bytes of its array (optional when a later format added it), error
 * and stacktrace also as texts (formats 2 and 3), each text column in `texts` (format 9 on),
 * extensions beside them in formats 2 to 7.
 */
const JobColumnsShape = Type.Object({
  count: Type.Integer({ minimum: 0 }),
  ids: textOrBytes(),
  idLengths: bytes(),
  externalIds: textOrBytes(),
  externalIdLengths: bytes(),
  strings: Type.Array(text()),
  ...Object.fromEntries(
    TYPED_COLUMNS.map((name) => {
      const shape = name === 'error' || name === 'stacktrace' ? codesOrTexts() : bytes();
      return [name, inEveryFormat(name) ? shape : Type.Optional(shape)];
    }),
  ),
  texts: Type.Optional(Type.Object(Object.fromEntries(TEXT_COLUMNS.map((name) => [name, Type.Optional(Type.Object({ bytes: bytes(), lengths: bytes() }))])))),
  extensions: Type.Optional(Type.Array(nullable(Type.Union([text(), freeObject()])))),
  history: bytes(),
  historyLengths: bytes(),
});

/** A job as format 1 stored it: the fields reviveJob reads. */
const FormatOneJobShape = Type.Object({
  id: text(),
  connectionId: text(),
  externalId: text(),
  name: text(),
  queue: nullable(text()),
  createdAtMs: number(),
  history: Type.Array(number()),
  lastEventMs: number(),
});

/** One tier of a task metrics series: bucket numbers, offsets and bytes (bucket-tier.ts checks they agree as it loads them). */
const TierShape = Type.Object({ starts: bytes(), offsets: bytes(), bytes: bytes() });
const SeriesShape = Type.Object({ lastActiveMs: number(), tiers: Type.Object({ minute: TierShape, hour: TierShape, day: TierShape }) });
const FoldShape = nullable(Type.Object({ folded: number(), series: SeriesShape }));

const CHUNK_SHAPES: Record<SnapshotChunk['k'], TSchema> = {
  header: Type.Object({ version: number(), takenAtMs: number() }),
  accounts: Type.Object({
    data: Type.Object({
      users: Type.Array(UserShape),
      sessions: Type.Array(SessionShape),
      connections: Type.Array(ConnectionShape),
      // format 6
      teams: Type.Optional(Type.Object({ teams: Type.Array(TeamShape), memberships: Type.Array(MembershipShape) })),
      teamsEra: Type.Optional(Type.Boolean()),
      passwordLinks: Type.Optional(Type.Array(PasswordLinkShape)),
      // format 9
      views: Type.Optional(Type.Array(SavedViewShape)),
    }),
  }),
  audit: Type.Object({ entries: Type.Array(Type.Object({ entry: AuditEntryShape, via: nullable(text()) })) }),
  connection: Type.Object({
    id: text(),
    quota: Type.Object({ day: number(), used: number(), bytes: Type.Optional(number()) }),
    dedupKeys: Type.Array(text()),
    workers: Type.Array(WorkerShape),
    queues: Type.Array(QueueShape),
    commands: Type.Array(CommandShape),
    commandOutcomes: Type.Optional(Type.Array(CommandOutcomeShape)),
    // format 7 on
    controlOutcomes: Type.Optional(Type.Array(ControlOutcomeShape)),
    capabilities: Type.Optional(Type.Array(CapabilitiesShape)),
    alerts: Type.Optional(
      Type.Object({
        rules: Type.Array(AlertRuleShape),
        states: Type.Array(Type.Object({ ruleId: text(), state: RuleStateShape })),
        channels: Type.Array(AlertChannelShape),
        pending: Type.Array(DeliveryShape),
        history: Type.Array(DeliveryAttemptShape),
        transitions: Type.Array(TransitionShape),
      }),
    ),
    jobTable: Type.Optional(
      Type.Object({
        rows: number(),
        idBytes: number(),
        externalIdBytes: number(),
        historyEntries: number(),
        extensionBytes: Type.Optional(number()),
        textBytes: Type.Optional(Type.Record(Type.String(), number())),
      }),
    ),
    // format 8 on
    markers: Type.Optional(Type.Array(MarkerShape)),
  }),
  // format 8 on
  taskMetrics: Type.Object({
    connectionId: text(),
    part: Type.Object({
      tasks: Type.Array(Type.Object({ task: text(), queue: nullable(text()), series: SeriesShape })),
      queues: Type.Array(Type.Object({ queue: text(), series: SeriesShape })),
      otherTasks: FoldShape,
      otherQueues: FoldShape,
    }),
  }),
  dedupKeys: Type.Object({ connectionId: text(), keys: Type.Array(text()) }),
  jobs: Type.Object({ connectionId: text(), jobs: Type.Array(FormatOneJobShape) }),
  jobColumns: Type.Object({ connectionId: text(), columns: JobColumnsShape }),
  end: Type.Object({}),
};

export const CHUNK_KINDS: readonly string[] = Object.keys(CHUNK_SHAPES);

const CHECKS = new Map(Object.entries(CHUNK_SHAPES).map(([kind, schema]) => [kind, shapeCheck(`a '${kind}' chunk`, schema)]));

/** The chunk, typed, when its shape is one this version restores; otherwise a ShapeError. */
export function checkChunkShape(raw: unknown): SnapshotChunk {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ShapeError(`expected a snapshot chunk (an object with a kind 'k'), found ${describeValue(raw)}`);
  const kind = (raw as { k?: unknown }).k;
  const check = typeof kind === 'string' ? CHECKS.get(kind) : undefined;
  if (check === undefined) throw new ShapeError(`expected a snapshot chunk kind this version knows (${CHUNK_KINDS.join(', ')}), found ${describeValue(kind)}`);
  check(raw);
  return raw as SnapshotChunk;
}
