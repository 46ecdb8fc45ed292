/** Previous/next for the page-based lists (queues, workers); the page number lives in the address. */
import { navigate, withQuery } from '../router.ts';

export function PagePager({ page, totalPages, total }: { page: number; totalPages: number; total: number }) {
  if (totalPages <= 1) return <p class="muted pager">{total.toLocaleString()} in all</p>;
  const go = (to: number) => navigate(withQuery({ page: to === 1 ? undefined : String(to) }));
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => go(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {totalPages} ({total.toLocaleString()} in all)
      </span>
      <button type="button" disabled={page >= totalPages} onClick={() => go(page + 1)}>
        Next
      </button>
    </nav>
  );
}
