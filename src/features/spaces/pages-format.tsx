import { bookPeopleFormat } from '../../core/people-format.ts';
import {
  DateTime,
  Field,
  Form,
  type FormState,
  Money,
  PeopleFormatProvider,
} from '../../platform/web/components.tsx';
import { bookPath, type Shell } from '../../platform/web/shell.ts';

// The "Dates and numbers" card of Book settings: the book's time zone and locale, which every
// page, mail and document of the book writes moments, dates and amounts in.

/** A fixed moment and amount, written the way the book writes them, beside the form. */
const SAMPLE_MOMENT = '2026-03-01T18:30:00.000Z';

export function FormatCard(props: {
  shell: Shell & { book: { id: string } };
  space: { id: string; time_zone: string; locale: string; base_currency: string };
  form: FormState;
  admin: boolean;
}) {
  const { shell, space, form } = props;
  const sample = (
    <PeopleFormatProvider format={bookPeopleFormat(space)}>
      <p class="muted" id="format-sample">
        A moment reads <DateTime at={SAMPLE_MOMENT} />, a due date <DateTime at="2026-03-31" />, an amount{' '}
        <Money amount="1234.00000000" currency={space.base_currency} />.
      </p>
    </PeopleFormatProvider>
  );
  return (
    <div class="card" id="dates-and-numbers">
      <h2>Dates and numbers</h2>
      {sample}
      {props.admin ? (
        <Form
          action={bookPath(space.id, 'settings/format')}
          csrf={shell.csrfToken}
          form={form}
          label="Dates and numbers"
        >
          <div class="row">
            <Field
              name="time_zone"
              label="Time zone"
              form={form}
              value={space.time_zone}
              required
              maxLength={64}
              hint="A name such as Europe/Berlin, America/New_York or UTC."
            />
            <Field
              name="locale"
              label="Language for dates and numbers"
              form={form}
              value={space.locale}
              required
              maxLength={35}
              hint="A language tag such as en-GB, de-DE or ja-JP."
            />
          </div>
          <button type="submit">Save dates and numbers</button>
        </Form>
      ) : (
        <p>
          Time zone <strong>{space.time_zone}</strong> · language <strong>{space.locale}</strong>
        </p>
      )}
    </div>
  );
}
