import { DateTime, Enum, NullableDateTime, Text, Type } from '../../platform/http/schema-kit.ts';
import { BOOK_EVENTS } from './domain.ts';

const Url = Text({
  minLength: 1,
  maxLength: 2000,
  description: 'Public https address on port 443 (http and loopback only with the development switch).',
});

export const SubscriptionCreate = Type.Object({
  url: Url,
  events: Type.Array(Enum(BOOK_EVENTS), {
    maxItems: BOOK_EVENTS.length,
    uniqueItems: true,
    description: 'The events to send; empty subscribes to every event, including ones added later.',
  }),
});

const SubscriptionFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  status: Type.String({ description: 'active or paused' }),
  created_at: DateTime(),
  paused_at: NullableDateTime(),
};

export const SubscriptionOut = Type.Object(SubscriptionFields);
export const SubscriptionList = Type.Object({ items: Type.Array(SubscriptionOut) });
export const SubscriptionWithSecret = Type.Object({
  ...SubscriptionFields,
  secret: Type.String({ description: 'Signs the deliveries. Shown only now; kept encrypted.' }),
});
const PreviousSecretUntil = DateTime({
  description:
    'Until then the replaced secret keeps signing beside the new one (in webhook-signature); X-Service-Signature uses the new one at once.',
});
export const SubscriptionRotated = Type.Object({
  ...SubscriptionFields,
  secret: Type.String({ description: 'The new signing secret. Shown only now; kept encrypted.' }),
  previous_secret_until: PreviousSecretUntil,
});
export const KeySecretRotated = Type.Object({
  id: Type.String({ format: 'uuid' }),
  webhook_secret: Type.String({
    description: "The key's new webhook signing secret. Shown only now; kept encrypted.",
  }),
  previous_secret_until: PreviousSecretUntil,
});
export const SubscriptionDeleted = Type.Object({
  id: Type.String({ format: 'uuid' }),
  deleted: Type.Boolean(),
});

export const SpaceParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const SubscriptionParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  sid: Type.String({ format: 'uuid' }),
});
export const DeliveryParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  sid: Type.String({ format: 'uuid' }),
  did: Type.String({ format: 'uuid' }),
});

export const KeyParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  key_id: Type.String({ format: 'uuid' }),
});
export const KeyDeliveryParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  key_id: Type.String({ format: 'uuid' }),
  did: Type.String({ format: 'uuid' }),
});

export const JournalQuery = Type.Object({
  // Query strings are text and nothing is coerced, so the number is checked by the service.
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1 to 200; default 50.' })),
  starting_after: Type.Optional(
    Type.String({ format: 'uuid', description: 'The last delivery id of the previous page.' }),
  ),
  status: Type.Optional(Enum(['pending', 'held', 'delivered', 'given_up'] as const)),
});

export const DeliveryOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  event_id: Type.String({ format: 'uuid', description: 'Sent as X-Service-Event-Id.' }),
  event: Type.String(),
  status: Type.String({ description: 'pending, held (subscription paused), delivered or given_up' }),
  attempt: Type.Integer({ description: 'Attempts made so far.' }),
  attempts_max: Type.Integer(),
  response_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime(),
  last_attempt_at: NullableDateTime(),
  next_attempt_at: NullableDateTime({ description: 'Set while pending.' }),
  delivered_at: NullableDateTime(),
});
export const DeliveryPage = Type.Object({ items: Type.Array(DeliveryOut), has_more: Type.Boolean() });

export const WebhookTest = Type.Object({
  url: Type.Optional(Url),
  secret: Type.Optional(
    Text({ minLength: 1, maxLength: 200, description: 'Signs the test; a new one is made when missing.' }),
  ),
  subscription_id: Type.Optional(
    Type.String({ format: 'uuid', description: "Instead of url and secret: send to this subscription's." }),
  ),
});

export const WebhookTestOut = Type.Object({
  event_id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  delivered: Type.Boolean(),
  response_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Integer(),
  secret: Type.Optional(
    Type.String({ description: 'The secret that signed the test, when none was given.' }),
  ),
});
