import { groupedIban } from '../../core/bank-transfer.ts';
import { DateTime, EmptyState, Table } from './components.tsx';

// The history of an object's edits (accounts, contacts): who changed what and when, newest
// first, each changed field with its value before and after in words a person reads.

export type RecordedEdit = {
  id: string;
  at: string;
  by: string;
  changed: Record<string, { from: unknown; to: unknown }>;
};

/** Renders a field's value for the history; the default writes text as it is. */
export type ShownValue = (field: string, value: unknown) => string;

/**
 * A value as a person reads it: text as it is, an object (bank details) field by field, an IBAN
 * in groups of four as the pay page writes it.
 */
export function shownValue(_field: string, value: unknown): string {
  if (value === null || value === undefined || value === '') return '(none)';
  if (Array.isArray(value))
    return value.length === 0 ? '(none)' : value.map((item) => shownValue('', item)).join('; ');
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .filter(
        ([name, inner]) => name !== 'scheme' && inner !== null && inner !== '' && typeof inner !== 'boolean',
      )
      .map(([name, inner]) =>
        name === 'iban' && typeof inner === 'string' ? groupedIban(inner) : shownValue('', inner),
      )
      .join(' · ');
  return String(value);
}

export function EditHistory(props: {
  edits: RecordedEdit[];
  /** Each field's name as people read it ("requisites" → "Bank details"). */
  words: Record<string, string>;
  shown?: ShownValue;
}) {
  const shown = props.shown ?? shownValue;
  return (
    <Table
      caption="Changes"
      columns={[
        { header: 'When', cell: (edit) => <DateTime at={edit.at} /> },
        { header: 'Who', cell: (edit) => edit.by },
        {
          header: 'What changed',
          cell: (edit) => (
            <ul class="plain">
              {Object.entries(edit.changed).map(([field, change]) => (
                <li>
                  {props.words[field] ?? field}: {shown(field, change.from)} → {shown(field, change.to)}
                </li>
              ))}
            </ul>
          ),
        },
      ]}
      rows={props.edits}
      nextHref={null}
      firstHref={null}
      empty={<EmptyState title="No changes yet" />}
    />
  );
}
