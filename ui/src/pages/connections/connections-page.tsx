export function ConnectionsPage(_props: { id?: string }) { return <p>Coming.</p>; }
