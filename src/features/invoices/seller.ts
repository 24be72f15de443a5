import type { Queryable } from '../../platform/db/database.ts';
import { logoDigestOf, postalAddressText, sellerProfileOf } from '../spaces/index.ts';
import { mergeSeller, type ProfileSeller, type SellerColumns } from './domain.ts';
import * as store from './store.ts';

// Who a document is from. A sent document keeps the seller it was sent with (its snapshot); a
// draft shows the book's profile as it is now under what the document set itself.

async function profileSeller(db: Queryable, spaceId: string): Promise<ProfileSeller> {
  const profile = await sellerProfileOf(db, spaceId);
  return {
    display_name: profile.display_name,
    legal_name: profile.legal_name,
    address: profile.address,
    address_text: postalAddressText(profile.address),
    vat_id: profile.vat_id,
    tax_number: profile.tax_number,
    registration_id: profile.registration_id,
    email: profile.email,
    phone: profile.phone,
    website: profile.website,
    invoice_footer: profile.invoice_footer,
  };
}

/**
 * Copies the seller into a document that has none yet (it is being sent, or issued): from then
 * on a change of the profile leaves the document as it was sent. A document that has one keeps it.
 */
export async function snapshotSeller(
  tx: Queryable,
  row: store.InvoiceRow,
  at: Date,
): Promise<store.InvoiceRow> {
  if (row.seller_snapshot !== null) return row;
  const { columns, snapshot } = mergeSeller(row, await profileSeller(tx, row.space_id));
  const sent = { ...snapshot, logo_sha256: await logoDigestOf(tx, row.space_id) };
  return store.updateInvoice(tx, row.space_id, row.id, {
    ...columns,
    seller_snapshot: JSON.stringify(sent),
    updated_at: at,
  });
}

/**
 * A sent document's seller corrected by hand (POST …/seller): the new fields over the seller it
 * was sent with, never over the profile as it is now.
 */
export async function reSnapshotSeller(
  tx: Queryable,
  row: store.InvoiceRow,
  own: SellerColumns,
  at: Date,
): Promise<store.InvoiceRow> {
  const sent = row.seller_snapshot;
  if (sent === null) return store.updateInvoice(tx, row.space_id, row.id, { ...own, updated_at: at });
  const before: ProfileSeller = {
    ...sent,
    display_name: sent.name,
    address_text: row.seller_address,
    address: { ...sent.address, country: sent.address.country || row.seller_country },
  };
  const { columns, snapshot } = mergeSeller(own, before);
  // The logo it was sent with stays (a snapshot older than kept logos still has none named).
  const corrected =
    sent.logo_sha256 === undefined ? snapshot : { ...snapshot, logo_sha256: sent.logo_sha256 };
  return store.updateInvoice(tx, row.space_id, row.id, {
    ...columns,
    seller_snapshot: JSON.stringify(corrected),
    updated_at: at,
  });
}

/** The document with the seller it shows: its snapshot once sent, else the profile as it is now. */
export async function withSellerShown(db: Queryable, row: store.InvoiceRow): Promise<store.InvoiceRow> {
  if (row.seller_snapshot !== null) return row;
  const { columns, snapshot } = mergeSeller(row, await profileSeller(db, row.space_id));
  return { ...row, ...columns, seller_snapshot: snapshot };
}

/** Days a new document gives the client to pay by default: the book's payment terms. */
export async function paymentTermsDays(db: Queryable, spaceId: string): Promise<number> {
  return (await sellerProfileOf(db, spaceId)).payment_terms_days;
}
