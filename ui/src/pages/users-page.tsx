export function UsersPage(_props: { id?: string }) { return <p>Coming.</p>; }
