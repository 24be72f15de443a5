import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { LOGO_BYTES_MAX, LOGO_SIDE_MAX, prepareLogo } from '../../platform/image.ts';
import { requireAdministering, requireMember, type SpacesDeps } from './service.ts';
import * as store from './store.ts';

// The book's logo: uploaded by owners and admins (Book settings, or PUT …/profile/logo), made
// into a PNG or JPEG of at most 512 pixels a side (platform/image.ts) and kept in the database.
// Public pages show it from /logos/{sha256}; documents read its bytes with sellerLogoOf. Every
// logo a book has had is kept (seller_logo_images): a sent document names its own.

const REFUSALS = {
  type: 'The logo must be a PNG or a JPEG image (SVG and other formats are not taken).',
  pixels: 'The logo picture is too large in pixels; upload one of at most 4096 × 4096.',
  unreadable: 'The logo file could not be read as an image.',
} as const;

export type LogoOut = {
  content_type: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
  size: number;
  url: string;
};

const logoPath = (sha256: string) => `/logos/${sha256}`;

/** PUT …/profile/logo (owners and admins): the image is checked, shrunk and stored; it replaces the old one. */
export async function uploadLogo(
  deps: SpacesDeps,
  userId: string,
  spaceId: string,
  bytes: Buffer,
): Promise<LogoOut> {
  requireAdministering(await requireMember(deps.db, spaceId, userId));
  if (bytes.length > LOGO_BYTES_MAX)
    throw new AppError('payload_too_large', 'The logo is larger than 1 MB.', {
      field: 'logo',
      max_bytes: LOGO_BYTES_MAX,
    });
  const prepared = prepareLogo(bytes);
  if (!prepared.ok)
    throw new AppError('invalid_request', REFUSALS[prepared.reason], {
      field: 'logo',
      reason: prepared.reason,
      accepted: ['image/png', 'image/jpeg'],
    });
  const { image } = prepared;
  const sha256 = createHash('sha256').update(image.bytes).digest('hex');
  const kept = {
    space_id: spaceId,
    content_type: image.contentType,
    bytes: image.bytes,
    width: image.width,
    height: image.height,
    sha256,
    created_at: deps.clock.now(),
  };
  await deps.db.transaction().execute((tx) => store.saveLogo(tx, kept));
  return {
    content_type: image.contentType,
    width: image.width,
    height: image.height,
    size: image.bytes.length,
    url: logoPath(sha256),
  };
}

/** DELETE …/profile/logo (owners and admins): the book has no logo any more. */
export async function removeLogo(deps: SpacesDeps, userId: string, spaceId: string) {
  requireAdministering(await requireMember(deps.db, spaceId, userId));
  await store.deleteLogo(deps.db, spaceId);
}

/** GET …/profile/logo (any member): the stored logo's facts, or 404 when the book has none. */
export async function describeLogo(deps: SpacesDeps, userId: string, spaceId: string): Promise<LogoOut> {
  await requireMember(deps.db, spaceId, userId);
  const logo = await store.findLogo(deps.db, spaceId);
  if (!logo) throw new AppError('not_found', 'This book has no logo.');
  return {
    content_type: logo.content_type,
    width: logo.width,
    height: logo.height,
    size: logo.bytes.byteLength,
    url: logoPath(logo.sha256),
  };
}

/** The book's logo now, its digest for a document's seller snapshot; null when it has none. */
export async function logoDigestOf(db: Queryable, spaceId: string): Promise<string | null> {
  return (await store.findLogoDigest(db, spaceId))?.sha256 ?? null;
}

/**
 * A document's logo as bytes (the PDF): the one its seller snapshot names (`sha256`, null for
 * none), or the book's logo now for a draft or a snapshot older than kept logos (undefined).
 */
export async function sellerLogoOf(db: Queryable, spaceId: string, sha256?: string | null) {
  if (sha256 === null) return null;
  const logo =
    sha256 === undefined ? await store.findLogo(db, spaceId) : await store.findLogoImage(db, spaceId, sha256);
  if (!logo) return null;
  return {
    contentType: logo.content_type,
    bytes: Buffer.from(logo.bytes),
    width: logo.width,
    height: logo.height,
  };
}

/** Where a public page finds the book's logo (same origin), or null when it has none. */
export async function logoUrlOf(db: Queryable, spaceId: string): Promise<string | null> {
  const found = await store.findLogoDigest(db, spaceId);
  return found ? logoPath(found.sha256) : null;
}

/** A logo by its public address (the SHA-256 of its bytes), or undefined. */
export async function logoByDigest(db: Queryable, sha256: string) {
  if (!/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  const found = await store.findLogoByDigest(db, sha256);
  return found ? { contentType: found.content_type, bytes: Buffer.from(found.bytes) } : undefined;
}

export { LOGO_BYTES_MAX, LOGO_SIDE_MAX };
