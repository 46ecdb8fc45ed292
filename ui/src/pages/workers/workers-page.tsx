export function WorkersPage(_props: { id?: string }) { return <p>Coming.</p>; }
