/** One tab per state with the list total for the other filters; the active one is in the address. */
import { Link } from '../../components/link.tsx';
import { JOB_STATES } from '../../lib/job-filters.ts';
import { withQuery } from '../../router.ts';

export function StateTabs({ active, counts }: { active: string | undefined; counts: Record<string, number> }) {
  const tabs: Array<[string, string]> = [['all', 'All'], ...JOB_STATES.map((state): [string, string] => [state, state])];
  return (
    <nav class="tabs" aria-label="Job states">
      {tabs.map(([key, label]) => {
        const selected = (active ?? 'all') === key;
        return (
          <Link key={key} href={withQuery({ state: key === 'all' ? undefined : key })} aria-current={selected ? 'page' : undefined} class={`tab state-tab-${key}`}>
            {label} <span class="count">{counts[key] ?? '…'}</span>
          </Link>
        );
      })}
    </nav>
  );
}
