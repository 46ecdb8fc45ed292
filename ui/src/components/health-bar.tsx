/** The queue's health bar: one cell per bucket, coloured by how many of its finished jobs failed. */
import type { QueueView } from '../api/types.ts';
import { absoluteTime } from '../lib/time.ts';

type Bucket = NonNullable<QueueView['healthBar']>['buckets'][number];

export function bucketClass(bucket: Bucket): string {
  const finished = bucket.succeeded + bucket.failed;
  if (finished === 0) return '';
  if (bucket.failed === 0) return 'good';
  return bucket.failed / finished < 0.5 ? 'some' : 'bad';
}

export function HealthBar({ buckets, label }: { buckets: Bucket[]; label: string }) {
  const failed = buckets.reduce((sum, bucket) => sum + bucket.failed, 0);
  const succeeded = buckets.reduce((sum, bucket) => sum + bucket.succeeded, 0);
  return (
    <div class="health" role="img" aria-label={`${label}: ${succeeded} succeeded, ${failed} failed`}>
      {buckets.map((bucket) => (
        <span key={bucket.start} class={bucketClass(bucket)} title={`${absoluteTime(bucket.start)}: ${bucket.succeeded} succeeded, ${bucket.failed} failed`} />
      ))}
    </div>
  );
}
