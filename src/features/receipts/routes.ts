import type { FastifyInstance } from 'fastify';
import { AppError } from '../../core/errors.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { Type } from '../../platform/http/schema-kit.ts';
import { typedRoutes } from '../../platform/http/typed.ts';
import { receiptSigner } from './service.ts';

const SignerParams = Type.Object({ address: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }) });

/**
 * GET /.well-known/x402-receipt-signers/{address}: whether an address is a book's receipt key,
 * and which book's (public, CORS open). 404 for any other address.
 */
export function registerReceiptRoutes(server: FastifyInstance, deps: { db: Queryable }) {
  const app = typedRoutes(server);
  app.get(
    '/.well-known/x402-receipt-signers/:address',
    { schema: { hide: true, params: SignerParams } },
    async (request, reply) => {
      const signer = await receiptSigner(deps.db, request.params.address);
      if (!signer) throw new AppError('not_found', 'This address signs no Tollbook receipts.');
      reply.header('access-control-allow-origin', '*');
      return { ...signer, since: signer.since.toISOString() };
    },
  );
}
