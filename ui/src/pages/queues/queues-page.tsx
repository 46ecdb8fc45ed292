export function QueuesPage(_props: { id?: string }) { return <p>Coming.</p>; }
