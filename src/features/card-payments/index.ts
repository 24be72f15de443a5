export { CARD_CURRENCIES, cardAmount } from './domain.ts';
export { type CardGateway, stripeGateway } from './gateway.ts';
export { registerStripeWebhookRoute } from './routes.ts';
export { type CardPaymentsDeps, cardTakes, openCheckout } from './service.ts';
