import { Component, type ComponentChildren } from 'preact';
import { formatMoneyTextForPeople } from '../../core/money.ts';
import {
  formatCalendarDateForPeople,
  formatMomentDayForPeople,
  formatMomentForPeople,
  isCalendarDate,
  type PeopleFormat,
  UTC_ENGLISH,
} from '../../core/people-format.ts';

// The few components every screen shares. They take plain data and return markup; preact's
// renderer escapes every text and attribute, so nothing here builds HTML from strings.

/**
 * What the renderer hands every component below a `PeopleFormatProvider` as its second argument
 * (preact's context of plain values): the book's time zone and locale.
 */
export type PeopleContext = { peopleFormat?: PeopleFormat };

/** The format a component writes in: its provider's, or UTC and English without one. */
export function contextFormat(context: PeopleContext | undefined): PeopleFormat {
  return context?.peopleFormat ?? UTC_ENGLISH;
}

/**
 * The book's time zone and locale for every `DateTime` and `Money` below it: the layout provides
 * the open book's, a public page and a mail the book that owns it.
 *
 * It hands the format itself down, a plain value. preact's `createContext` provider hands down
 * the provider (a component, and through it the whole page's tree), and keeping that reachable
 * from every component below made V8 copy and promote most of each page during rendering: the
 * Payment requests page cost twice the CPU, most of it in garbage collection.
 */
export class PeopleFormatProvider extends Component<{ format: PeopleFormat; children: ComponentChildren }> {
  override getChildContext(): PeopleContext {
    return { peopleFormat: this.props.format };
  }

  override render() {
    return this.props.children;
  }
}

/** An amount as people read it in the book's locale, with its currency: "1,234.50 USDC". */
export function Money({ amount, currency }: { amount: string; currency: string }, context?: PeopleContext) {
  const { locale } = contextFormat(context);
  return (
    <span class="money">{formatMoneyTextForPeople(amount, currency, locale) ?? `${amount} ${currency}`}</span>
  );
}

/** What toISOString writes: a moment read from the services' records is taken as it is. */
const ISO_MOMENT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A moment's ISO text, or null when it is not a moment. */
function isoOf(at: string | Date): string | null {
  if (typeof at === 'string' && ISO_MOMENT.test(at)) return at;
  const date = typeof at === 'string' ? new Date(at) : at;
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/**
 * A moment written on the server in the book's time zone and locale (hovering shows it in UTC);
 * `dateOnly` writes the day it falls on there. A date alone ("2026-03-01": a due date, an issue
 * date) is a calendar day in no zone and is written as that day.
 */
export function DateTime(
  { at, dateOnly = false }: { at: string | Date | null; dateOnly?: boolean },
  context?: PeopleContext,
) {
  const format = contextFormat(context);
  if (at === null) return <span class="muted">—</span>;
  if (typeof at === 'string' && isCalendarDate(at))
    return <time datetime={at}>{formatCalendarDateForPeople(at, format.locale)}</time>;
  const iso = isoOf(at);
  if (iso === null) return <span>{String(at)}</span>;
  const moment = new Date(iso);
  return (
    <time datetime={iso} title={`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}>
      {dateOnly ? formatMomentDayForPeople(moment, format) : formatMomentForPeople(moment, format)}
    </time>
  );
}

/** What an empty list says: what it would hold, and what to do next. */
export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <strong>{title}</strong>
      {children}
    </div>
  );
}

/** A secret shown once: the value, a copy button (shown when script runs) and the warning. */
export function SecretBox({ id, label, value }: { id: string; label: string; value: string }) {
  return (
    <div class="secret" role="status">
      <strong>{label}</strong>
      <div class="value">
        <code id={id}>{value}</code>
        <button type="button" class="small secondary" data-copy={id} hidden>
          Copy
        </button>
      </div>
      <div>Copy it now: you will not see this again.</div>
    </div>
  );
}

export function Notice({ kind, children }: { kind: 'error' | 'ok' | 'warn'; children: ComponentChildren }) {
  return (
    <div class={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** A record's word as people read it: "awaiting_approval" → "Awaiting approval". */
export function statusWords(word: string): string {
  const spaced = word.replaceAll('_', ' ');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/**
 * A status as a chip coloured by what it means: `warn` (amber) for what waits, `ok` (green) for
 * what succeeded, `bad` (red) for what failed or ended; a plain word is capitalised.
 */
export function Pill({ tone, children }: { tone?: 'ok' | 'warn' | 'bad'; children: ComponentChildren }) {
  return (
    <span class={tone ? `pill ${tone}` : 'pill'}>
      {typeof children === 'string' ? statusWords(children) : children}
    </span>
  );
}

/** What a form shows after a refused write: one sentence, and messages beside named fields. */
export type FormState = {
  values: Record<string, unknown>;
  errors: Record<string, string>;
  sentence?: string | undefined;
};

export const EMPTY_FORM: FormState = { values: {}, errors: {} };

export function typedValue(state: FormState | undefined, name: string): string | undefined {
  // Dotted names ("addresses.0.requisites.iban") read into the nested body the form built.
  let value: unknown = state?.values;
  for (const part of name.split('.')) {
    value =
      value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  // A whole number the form shape turned into a number is shown again as typed.
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' ? value : undefined;
}

type FieldProps = {
  name: string;
  label: string;
  form?: FormState | undefined;
  type?: 'text' | 'email' | 'password' | 'url' | 'date' | 'number';
  hint?: string;
  required?: boolean;
  value?: string;
  autocomplete?: string;
  placeholder?: string;
  maxLength?: number;
  /** Starts the element ids (default "field"): two forms on one page with a field of one name need two. */
  idPrefix?: string;
};

/** A labelled input with its hint and, after a refused write, its error in place. */
export function Field(props: FieldProps) {
  const id = `${props.idPrefix ?? 'field'}-${props.name}`;
  const error = props.form?.errors[props.name];
  const describedBy = [props.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        value={typedValue(props.form, props.name) ?? props.value}
        required={props.required}
        autocomplete={props.autocomplete}
        placeholder={props.placeholder}
        maxLength={props.maxLength}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
      />
      {props.hint && (
        <span class="hint" id={`${id}-hint`}>
          {props.hint}
        </span>
      )}
      {error && (
        <span class="error" id={`${id}-error`}>
          {error}
        </span>
      )}
    </div>
  );
}

/** A labelled select; options are [value, label] pairs. */
export function Select(props: {
  name: string;
  label: string;
  options: readonly (readonly [string, string])[];
  form?: FormState | undefined;
  value?: string;
  hint?: string;
  idPrefix?: string;
}) {
  const id = `${props.idPrefix ?? 'field'}-${props.name}`;
  const error = props.form?.errors[props.name];
  const chosen = typedValue(props.form, props.name) ?? props.value;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name} aria-invalid={error ? 'true' : undefined}>
        {props.options.map(([value, label]) => (
          <option value={value} selected={value === chosen}>
            {label}
          </option>
        ))}
      </select>
      {props.hint && <span class="hint">{props.hint}</span>}
      {error && <span class="error">{error}</span>}
    </div>
  );
}

/** A form that posts with the session's CSRF token (htmx boosts it; without script it posts). */
export function Form(props: {
  action: string;
  csrf: string;
  children: ComponentChildren;
  form?: FormState | undefined;
  id?: string;
  label?: string;
}) {
  const { action, csrf, children, form } = props;
  return (
    <form method="post" action={action} id={props.id} aria-label={props.label}>
      <input type="hidden" name="_csrf" value={csrf} />
      {form?.sentence && <Notice kind="error">{form.sentence}</Notice>}
      {children}
    </form>
  );
}

/** One button that posts: revoke, verify, mark paid. */
export function ActionButton(props: {
  action: string;
  csrf: string;
  label: string;
  tone?: 'danger' | 'secondary';
  fields?: Record<string, string>;
  confirm?: string;
}) {
  return (
    <form method="post" action={props.action} class="inline" hx-confirm={props.confirm}>
      <input type="hidden" name="_csrf" value={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={`small ${props.tone ?? 'secondary'}`}>
        {props.label}
      </button>
    </form>
  );
}

export type Column<T> = {
  header: string;
  cell: (row: T) => ComponentChildren;
  numeric?: boolean;
};

/**
 * A list, newest first, 50 a page: the rows, or the empty state when there are none, and a
 * link to the next page when the service answered a cursor.
 */
export function Table<T>(props: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  empty: ComponentChildren;
  nextHref?: string | null;
  firstHref?: string | null;
  /**
   * On a phone each row is a card of label and value lines instead of a table row, for tables
   * whose cells (addresses, hashes) would make a sideways-scrolling strip too wide to read.
   */
  stacked?: boolean;
}) {
  if (props.rows.length === 0 && !props.firstHref) return <>{props.empty}</>;
  return (
    <>
      <div class={props.stacked ? 'table-wrap stacked' : 'table-wrap'}>
        <table>
          <caption class="skip">{props.caption}</caption>
          <thead>
            <tr>
              {props.columns.map((column) => (
                <th scope="col" class={column.numeric ? 'num' : undefined}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.rows.map((row) => (
              <tr>
                {props.columns.map((column) => (
                  <td class={column.numeric ? 'num' : undefined} data-label={column.header || undefined}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        <span>{props.firstHref && <a href={props.firstHref}>← First page</a>}</span>
        <span>{props.nextHref && <a href={props.nextHref}>Next page →</a>}</span>
      </nav>
    </>
  );
}

/** Filter links (by status, say); the current one is marked. */
export function Filters(props: {
  label: string;
  options: { href: string; label: string; current: boolean }[];
}) {
  return (
    <nav class="filters" aria-label={props.label}>
      <span class="muted">{props.label}:</span>
      {props.options.map((option) => (
        <a href={option.href} aria-current={option.current ? 'true' : undefined}>
          {option.label}
        </a>
      ))}
    </nav>
  );
}

/** A query string from the fields that have values (for pager and filter links). */
export function hrefWith(path: string, query: Record<string, string | null | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
