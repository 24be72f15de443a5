import Stripe from 'stripe';
import type { StripeSettings } from '../../platform/config.ts';

// The one place that talks to Stripe, through its official SDK. Everything the rail needs from
// Stripe is here, so the rest of the feature reads plain values.

export type OpenedSession = { id: string; url: string };

export type SessionDraft = {
  currency: string;
  amountMinor: bigint;
  name: string;
  successUrl: string;
  cancelUrl: string;
  requestId: string;
  metadata: Record<string, string>;
  idempotencyKey: string;
};

export type ChargeFacts = {
  id: string;
  paymentIntentId: string | null;
  amountRefunded: unknown;
  currency: string;
};

export type CardGateway = {
  /** Where Checkout pages live: the pay pages' forms may lead there. */
  checkoutOrigin: string;
  openSession(draft: SessionDraft): Promise<OpenedSession>;
  /** A charge as Stripe holds it now (refund events name the charge; its refunded total is read here). */
  charge(chargeId: string): Promise<ChargeFacts>;
  /** The event, if the signature over these exact bytes is the endpoint secret's and recent; else it throws. */
  verify(rawBody: Buffer, signature: string): Stripe.Event;
};

const STRIPE_TIMEOUT_MS = 20_000;
const STRIPE_CHECKOUT_ORIGIN = 'https://checkout.stripe.com';

export function stripeGateway(settings: StripeSettings): CardGateway {
  const target = settings.apiUrl ? new URL(settings.apiUrl) : undefined;
  const stripe = new Stripe(settings.secretKey, {
    maxNetworkRetries: 2,
    timeout: STRIPE_TIMEOUT_MS,
    telemetry: false,
    ...(target && {
      host: target.hostname,
      port: target.port || (target.protocol === 'https:' ? 443 : 80),
      protocol: target.protocol === 'https:' ? 'https' : 'http',
    }),
  });
  return {
    // Stripe's hosted Checkout; a stand-in API (STRIPE_API_URL) serves its own checkout pages.
    checkoutOrigin: target ? target.origin : STRIPE_CHECKOUT_ORIGIN,
    async openSession(draft) {
      // The amount is an integer of at most eight digits (checked by cardAmount), so it is
      // exact as a JavaScript number, which is what the SDK sends.
      const session = await stripe.checkout.sessions.create(
        {
          mode: 'payment',
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: draft.currency,
                unit_amount: Number(draft.amountMinor),
                product_data: { name: draft.name },
              },
            },
          ],
          client_reference_id: draft.requestId,
          metadata: draft.metadata,
          payment_intent_data: { metadata: draft.metadata },
          success_url: draft.successUrl,
          cancel_url: draft.cancelUrl,
        },
        { idempotencyKey: draft.idempotencyKey },
      );
      if (typeof session.url !== 'string')
        throw new Error(`Stripe answered session ${session.id} without a URL`);
      return { id: session.id, url: session.url };
    },
    async charge(chargeId) {
      const charge = await stripe.charges.retrieve(chargeId);
      return {
        id: charge.id,
        paymentIntentId: idOf(charge.payment_intent),
        amountRefunded: charge.amount_refunded,
        currency: charge.currency,
      };
    },
    verify(rawBody, signature) {
      return stripe.webhooks.constructEvent(rawBody, signature, settings.webhookSecret);
    },
  };
}

/** Stripe fields that name another object are its id, or the object itself when expanded. */
export function idOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string')
    return (value as { id: string }).id;
  return null;
}
