import { ActionButton, Field, Form, type FormState, Notice, Select } from '../../platform/web/components.tsx';
import { bookPath, type Shell } from '../../platform/web/shell.ts';
import { COUNTRY_CODES, countryName } from './domain.ts';
import type { SellerProfile } from './profile.ts';

// The seller profile on Book settings: who the business is on its invoices, quotes, credit
// notes and pay pages. Owners and admins edit it; others read it.

const COUNTRY_OPTIONS: readonly (readonly [string, string])[] = [
  ['', 'Choose a country'],
  ...COUNTRY_CODES.map((code) => [code, countryName(code)] as const).sort((a, b) => a[1].localeCompare(b[1])),
];

function ProfileReadOnly({ profile }: { profile: SellerProfile }) {
  const rows: [string, string][] = [
    ['Legal name', profile.legal_name],
    ['Trading name', profile.trading_name],
    ['VAT ID', profile.vat_id],
    ['Tax number', profile.tax_number],
    ['Company registration', profile.registration_id],
    ['Support email', profile.email],
    ['Phone', profile.phone],
    ['Website', profile.website],
    ['Payment terms', `${profile.payment_terms_days} days`],
  ];
  return (
    <dl class="figures">
      {rows
        .filter(([, value]) => value !== '')
        .map(([label, value]) => (
          <div>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  );
}

function AddressFields({ profile, form }: { profile: SellerProfile; form: FormState }) {
  const address = profile.address;
  return (
    <div>
      <h3>Address</h3>
      <div class="row">
        <Field
          name="address.line1"
          label="Street and number"
          form={form}
          value={address.line1}
          maxLength={200}
        />
        <Field
          name="address.line2"
          label="Additional line"
          form={form}
          value={address.line2}
          maxLength={200}
        />
      </div>
      <div class="row">
        <Field
          name="address.postal_code"
          label="Postal code"
          form={form}
          value={address.postal_code}
          maxLength={20}
        />
        <Field name="address.city" label="City" form={form} value={address.city} maxLength={100} />
        <Field name="address.region" label="Region" form={form} value={address.region} maxLength={100} />
        <Select
          name="address.country"
          label="Country"
          options={COUNTRY_OPTIONS}
          form={form}
          value={address.country}
        />
      </div>
    </div>
  );
}

function TaxAndContactFields({ profile, form }: { profile: SellerProfile; form: FormState }) {
  return (
    <>
      <div class="row">
        <Field
          name="vat_id"
          label="VAT ID"
          form={form}
          value={profile.vat_id}
          maxLength={64}
          hint="With its country prefix, e.g. DE123456789."
        />
        <Field name="tax_number" label="Tax number" form={form} value={profile.tax_number} maxLength={64} />
        <Field
          name="registration_id"
          label="Company registration"
          form={form}
          value={profile.registration_id}
          maxLength={64}
        />
      </div>
      <div class="row">
        <Field
          name="email"
          label="Support email"
          type="email"
          form={form}
          value={profile.email}
          maxLength={200}
        />
        <Field name="phone" label="Phone" form={form} value={profile.phone} maxLength={40} />
        <Field
          name="website"
          label="Website"
          type="url"
          form={form}
          value={profile.website}
          maxLength={200}
          placeholder="https://"
        />
      </div>
    </>
  );
}

function ProfileForm({ shell, profile, form }: { shell: Shell; profile: SellerProfile; form: FormState }) {
  return (
    <Form
      action={bookPath(profile.space_id, 'settings/profile')}
      csrf={shell.csrfToken}
      form={form}
      label="Seller profile"
    >
      <div class="row">
        <Field name="legal_name" label="Legal name" form={form} value={profile.legal_name} maxLength={200} />
        <Field
          name="trading_name"
          label="Trading name"
          form={form}
          value={profile.trading_name}
          maxLength={200}
          hint="Shown to clients and payers; the legal name stands in when empty."
        />
      </div>
      <AddressFields profile={profile} form={form} />
      <TaxAndContactFields profile={profile} form={form} />
      <div class="row">
        <Field
          name="payment_terms_days"
          label="Payment terms (days)"
          type="number"
          form={form}
          value={String(profile.payment_terms_days)}
          hint="Days from issue to due date, 0 to 365."
        />
        <Field
          name="public_handle"
          label="Public handle"
          form={form}
          value={profile.public_handle}
          maxLength={48}
          hint="Lower-case letters, digits and hyphens; the old handle stops working."
        />
      </div>
      <div class="field">
        <label for="field-invoice_footer">Invoice footer</label>
        <textarea id="field-invoice_footer" name="invoice_footer" maxLength={1000} rows={3}>
          {String(form.values.invoice_footer ?? profile.invoice_footer)}
        </textarea>
        {form.errors.invoice_footer && <span class="error">{form.errors.invoice_footer}</span>}
      </div>
      <button type="submit">Save the profile</button>
    </Form>
  );
}

/** The Seller profile card of Book settings. */
export function ProfileCard(props: {
  shell: Shell;
  profile: SellerProfile;
  form: FormState;
  admin: boolean;
}) {
  return (
    <div class="card" id="profile">
      <h2>Seller profile</h2>
      <p class="muted">
        Who you are on invoices, quotes, credit notes and pay pages. A document keeps the profile it was sent
        with. Shown to clients as <strong>{props.profile.display_name}</strong>.
      </p>
      {props.admin ? <ProfileForm {...props} /> : <ProfileReadOnly profile={props.profile} />}
    </div>
  );
}

type Numbering = Record<
  'invoice' | 'quote' | 'credit_note',
  { prefix: string; next_number: number; next: string }
>;

const KIND_LABELS = [
  ['invoice', 'Invoices'],
  ['quote', 'Quotes'],
  ['credit_note', 'Credit notes'],
] as const;

/** The Numbering card of Book settings: each kind's prefix and next number. */
export function NumberingCard(props: {
  shell: Shell;
  spaceId: string;
  numbering: Numbering;
  form: FormState;
  admin: boolean;
}) {
  const { numbering, form } = props;
  return (
    <div class="card" id="numbering">
      <h2>Numbering</h2>
      <p class="muted">
        Invoices, quotes and credit notes count apart. Numbers sent by an integration are kept as sent; a
        number already in use is skipped.
      </p>
      {props.admin ? (
        <Form
          action={bookPath(props.spaceId, 'settings/numbering')}
          csrf={props.shell.csrfToken}
          form={form}
          label="Numbering"
        >
          {KIND_LABELS.map(([kind, label]) => (
            <div class="row">
              <Field
                name={`${kind}.prefix`}
                label={`${label}: prefix`}
                form={form}
                value={numbering[kind].prefix}
                maxLength={20}
              />
              <Field
                name={`${kind}.next_number`}
                label={`${label}: next number`}
                type="number"
                form={form}
                value={String(numbering[kind].next_number)}
                hint={`Next: ${numbering[kind].next}`}
              />
            </div>
          ))}
          <button type="submit">Save the numbering</button>
        </Form>
      ) : (
        <p>{KIND_LABELS.map(([kind, label]) => `${label}: next ${numbering[kind].next}`).join(' · ')}</p>
      )}
    </div>
  );
}

/**
 * The Logo card of Book settings: the logo as payers see it, and for owners and admins a file
 * form (multipart) to upload another and a button to remove it.
 */
export function LogoCard(props: {
  shell: Shell;
  spaceId: string;
  logo: string | null;
  form: FormState;
  admin: boolean;
}) {
  const { shell, spaceId, logo, form } = props;
  return (
    <div class="card" id="logo">
      <h2>Logo</h2>
      <p class="muted">
        Shown on pay pages and on the public pages of invoices and quotes. PNG or JPEG up to 1 MB; it is
        shrunk to 512 pixels on its long side.
      </p>
      {logo ? (
        <p>
          <img id="logo-image" src={logo} alt="The book's logo" height={64} />
        </p>
      ) : (
        <p class="muted">No logo yet.</p>
      )}
      {props.admin && (
        <form
          method="post"
          action={bookPath(spaceId, 'settings/logo')}
          enctype="multipart/form-data"
          aria-label="Upload a logo"
        >
          <input type="hidden" name="_csrf" value={shell.csrfToken} />
          {form.sentence && <Notice kind="error">{form.sentence}</Notice>}
          <div class="field">
            <label for="field-logo">Logo file</label>
            <input id="field-logo" name="logo" type="file" accept="image/png,image/jpeg" required />
          </div>
          <button type="submit">Upload the logo</button>
        </form>
      )}
      {props.admin && logo && (
        <p class="actions">
          <ActionButton
            action={bookPath(spaceId, 'settings/logo/remove')}
            csrf={shell.csrfToken}
            label="Remove the logo"
            tone="secondary"
          />
        </p>
      )}
    </div>
  );
}
