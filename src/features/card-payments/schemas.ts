import { Type } from '../../platform/http/schema-kit.ts';

/** What Stripe is told: the event was taken (again, if it was a replay). */
export const WebhookReceivedOut = Type.Object({
  received: Type.Boolean(),
  duplicate: Type.Boolean(),
  outcome: Type.String(),
});
