import { AppError } from '../../core/errors.ts';
import { bookPeopleFormat, type PeopleFormat } from '../../core/people-format.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { Static } from '../../platform/http/schema-kit.ts';
import { displayNameOf } from './domain.ts';
import type { ProfileOut, ProfilePatch } from './schemas.ts';
import { requireAdministering, requireMember, type SpacesDeps } from './service.ts';
import * as store from './store.ts';

// The seller profile of a book: who the business is on its documents and public pages. Members
// read it; owners and admins change it. Documents copy it when they are sent (features/invoices).

const EMPTY_PROFILE: store.ProfileRow = {
  legal_name: '',
  trading_name: '',
  address_line1: '',
  address_line2: '',
  postal_code: '',
  city: '',
  region: '',
  country: '',
  vat_id: '',
  tax_number: '',
  registration_id: '',
  email: '',
  phone: '',
  website: '',
  payment_terms_days: 14,
  invoice_footer: '',
};

export type SellerProfile = Static<typeof ProfileOut>;

function presentProfile(
  space: { id: string; name: string; public_handle: string },
  row: store.ProfileRow,
): SellerProfile {
  return {
    space_id: space.id,
    legal_name: row.legal_name,
    trading_name: row.trading_name,
    display_name: displayNameOf(row, space.name),
    address: {
      line1: row.address_line1,
      line2: row.address_line2,
      postal_code: row.postal_code,
      city: row.city,
      region: row.region,
      country: row.country,
    },
    vat_id: row.vat_id,
    tax_number: row.tax_number,
    registration_id: row.registration_id,
    email: row.email,
    phone: row.phone,
    website: row.website,
    payment_terms_days: row.payment_terms_days,
    invoice_footer: row.invoice_footer,
    public_handle: space.public_handle,
  };
}

async function profileRow(db: Queryable, spaceId: string): Promise<store.ProfileRow> {
  const found = await store.findProfile(db, spaceId);
  if (!found) return EMPTY_PROFILE;
  const { space_id: _space, updated_at: _at, ...row } = found;
  return row;
}

/** The seller profile of a book, for the features that print it (no membership asked). */
export async function sellerProfileOf(db: Queryable, spaceId: string): Promise<SellerProfile> {
  return (await sellerFaceOf(db, spaceId)).profile;
}

/**
 * The seller profile of a book and the format its public pages write in (its time zone and
 * locale, as `peopleFormatOf` gives them), from one read of the book's row.
 */
export async function sellerFaceOf(
  db: Queryable,
  spaceId: string,
): Promise<{ profile: SellerProfile; format: PeopleFormat }> {
  const space = await store.findSpace(db, spaceId);
  if (!space) throw new AppError('not_found', 'No such space.');
  return { profile: presentProfile(space, await profileRow(db, spaceId)), format: bookPeopleFormat(space) };
}

/** GET …/profile: any member reads it. */
export async function getProfile(deps: SpacesDeps, userId: string, spaceId: string) {
  await requireMember(deps.db, spaceId, userId);
  return sellerProfileOf(deps.db, spaceId);
}

function merged(current: store.ProfileRow, patch: Static<typeof ProfilePatch>): store.ProfileRow {
  const { address, public_handle: _handle, ...fields } = patch;
  const known = Object.fromEntries(
    Object.entries(fields).filter(
      ([name, value]) => value !== undefined && Object.hasOwn(EMPTY_PROFILE, name),
    ),
  );
  const next = { ...current, ...known };
  if (address === undefined) return next;
  return {
    ...next,
    address_line1: address.line1 ?? '',
    address_line2: address.line2 ?? '',
    postal_code: address.postal_code ?? '',
    city: address.city ?? '',
    region: address.region ?? '',
    country: address.country ?? '',
  };
}

/**
 * PATCH …/profile (owners and admins): fields left out stay; a new public handle must be free,
 * and the old one stops answering at once.
 */
export async function updateProfile(
  deps: SpacesDeps,
  userId: string,
  spaceId: string,
  patch: Static<typeof ProfilePatch>,
) {
  requireAdministering(await requireMember(deps.db, spaceId, userId));
  await deps.db.transaction().execute(async (tx) => {
    const space = await store.findSpace(tx, spaceId);
    if (!space) throw new AppError('not_found', 'No such space.');
    const handle = patch.public_handle;
    if (handle !== undefined && handle !== space.public_handle) {
      const holder = await store.findSpaceByHandle(tx, handle);
      if (holder)
        throw new AppError('conflict', `The public handle ${handle} is taken; choose another.`, {
          field: 'public_handle',
        });
      await store.setHandle(tx, spaceId, handle);
    }
    await store.saveProfile(tx, spaceId, merged(await profileRow(tx, spaceId), patch), deps.clock.now());
  });
  return sellerProfileOf(deps.db, spaceId);
}
