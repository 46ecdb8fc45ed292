/** The header's alert indicator: how many rules fire now, linking to the Alerts page; nothing when none does. */
import { useEffect } from 'preact/hooks';
import { firingAlerts, watchFiringAlerts } from '../lib/firing-alerts.ts';
import { Link } from './link.tsx';

export function FiringBadge() {
  useEffect(() => watchFiringAlerts(), []);
  const firing = firingAlerts.value;
  if (firing.length === 0) return null;
  const names = firing.map((alert) => alert.ruleName).join(', ');
  return (
    <span title={`Firing: ${names}`} data-testid="firing-badge">
      <Link href="/alerts" class="firing-badge">
        {firing.length === 1 ? '1 alert firing' : `${firing.length} alerts firing`}
      </Link>
    </span>
  );
}
