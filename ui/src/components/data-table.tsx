/**
 * The table every list page uses: sortable headers (buttons, with `aria-sort`), optional
 * row selection, fixed column widths so live updates never shift the layout.
 */
import type { ComponentChildren } from 'preact';

export interface Column<Row> {
  id: string;
  label: string;
  /** Set for sortable columns: the API's sort key. */
  sortKey?: string;
  class?: string;
  cell: (row: Row) => ComponentChildren;
}

export interface TableSort {
  by: string;
  order: 'asc' | 'desc';
  onSort: (key: string) => void;
}

export interface TableSelection {
  selected: ReadonlySet<string>;
  onToggle: (id: string) => void;
  onToggleAll: (checked: boolean) => void;
}

export function DataTable<Row extends { id: string }>(props: { label: string; rows: Row[]; columns: Column<Row>[]; sort?: TableSort; selection?: TableSelection; rowClass?: (row: Row) => string }) {
  const { rows, columns, sort, selection } = props;
  const allSelected = selection !== undefined && rows.length > 0 && rows.every((row) => selection.selected.has(row.id));
  return (
    <div class="table-wrap">
      <table aria-label={props.label}>
        <thead>
          <tr>
            {selection && (
              <th class="select">
                <input type="checkbox" aria-label="Select all rows" checked={allSelected} onChange={(event) => selection.onToggleAll(event.currentTarget.checked)} />
              </th>
            )}
            {columns.map((column) => (
              <th key={column.id} class={column.class} aria-sort={sort && column.sortKey === sort.by ? (sort.order === 'asc' ? 'ascending' : 'descending') : undefined}>
                {sort && column.sortKey ? (
                  <button type="button" class="sort" onClick={() => sort.onSort(column.sortKey!)}>
                    {column.label}
                    <span aria-hidden="true">{column.sortKey === sort.by ? (sort.order === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                  </button>
                ) : (
                  column.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id} class={props.rowClass?.(row)} data-id={row.id}>
              {selection && (
                <td class="select">
                  <input type="checkbox" aria-label={`Select ${row.id}`} checked={selection.selected.has(row.id)} onChange={() => selection.onToggle(row.id)} />
                </td>
              )}
              {columns.map((column) => (
                <td key={column.id} class={column.class}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
