export function JobDetailPage(_props: { id?: string }) { return <p>Coming.</p>; }
