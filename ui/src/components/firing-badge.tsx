/** The header's alert indicator: how many rules fire now, linking to the Alerts page; nothing when none does. */
import { useEffect } from 'preact/hooks';
import { firingAlerts, watchFiringAlerts } from '../lib/firing-alerts.ts';
import { Link } from './link.tsx';

export function FiringBadge() {
  useEffect(() => watchFiringAlerts(), []);
  const firing = firingAlerts.value;
  if (firing.length === 0) return null;
  return (
    <span data-testid="firing-badge">
      <Link href="/alerts" class="firing-badge">
        {firing.length} firing
      </Link>
    </span>
  );
}
