/** The team page's parts: the members' columns (role and removal disabled, saying why, for who may not change them) and the form that adds one. */
import type { PublicMember, Role } from '../../api/types.ts';
import type { Column } from '../../components/data-table.tsx';
import { TimeText } from '../../components/time-text.tsx';
import { user } from '../../session.ts';

const ROLES: Role[] = ['viewer', 'operator', 'admin'];

export interface MemberActions {
  manages: boolean;
  /** why the user may not change members, when they may not */
  why: string | undefined;
  onRole: (member: PublicMember, role: Role) => void;
  onRemove: (member: PublicMember) => void;
}

export function memberColumns({ manages, why, onRole, onRemove }: MemberActions): Column<PublicMember & { id: string }>[] {
  return [
    { id: 'email', label: 'Member', cell: (member) => <>{member.email}{member.disabled && <span class="badge">disabled</span>}{member.userId === user.value?.id && <span class="muted"> (you)</span>}</> },
    {
      id: 'role',
      label: 'Role',
      cell: (member) => (
        <select aria-label={`Role of ${member.email}`} value={member.role} disabled={!manages} title={why} onChange={(event) => onRole(member, event.currentTarget.value as Role)}>
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
      ),
    },
    { id: 'since', label: 'Since', class: 'col-time hide-narrow', cell: (member) => <TimeText iso={member.since} /> },
    {
      id: 'remove',
      label: '',
      class: 'col-duration',
      cell: (member) => (
        <button type="button" class="small danger" disabled={!manages} title={why} aria-label={`Remove ${member.email}`} onClick={() => onRemove(member)}>
          Remove
        </button>
      ),
    },
  ];
}

export function AddMemberForm({ onAdd }: { onAdd: (event: SubmitEvent) => void }) {
  return (
    <form class="form-row card" onSubmit={onAdd}>
      <label>
        <span>Add a member by email</span>
        <input name="email" type="email" required autocomplete="off" />
      </label>
      <label>
        <span>Role</span>
        <select name="role">
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="primary">
        Add member
      </button>
    </form>
  );
}
