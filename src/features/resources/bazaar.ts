import {
  BAZAAR,
  bazaarResourceServerExtension,
  type DiscoveryExtension,
  declareDiscoveryExtension,
  validateDiscoveryExtension,
} from '@x402/extensions/bazaar';
import type { HttpMethod } from './domain.ts';

// An endpoint card as the bazaar extension describes it to x402 clients, made and checked by the
// extension's own helpers: its declaration, with the card's method filled in the way the
// extension's resource-server hook fills it from a request.

const BODY_METHODS: readonly string[] = ['POST', 'PUT', 'PATCH'];

export type BazaarCard = {
  http_method: HttpMethod | null;
  input_schema: Record<string, unknown> | null;
  /** An example input, which the extension's validator checks against the input schema. */
  input_example: Record<string, unknown> | null;
  output_schema: Record<string, unknown> | null;
  /** An example answer: the extension publishes the output (and its schema) only with one. */
  output_example: Record<string, unknown> | null;
};

/** The card's bazaar extension, or undefined when it names no method (nothing to describe). */
export function bazaarOf(card: BazaarCard): DiscoveryExtension | undefined {
  if (!card.http_method) return undefined;
  const output = card.output_example
    ? {
        output: {
          example: card.output_example,
          ...(card.output_schema ? { schema: card.output_schema } : {}),
        },
      }
    : {};
  const input = {
    ...(card.input_schema ? { inputSchema: card.input_schema } : {}),
    ...(card.input_example ? { input: card.input_example } : {}),
  };
  const declared = BODY_METHODS.includes(card.http_method)
    ? declareDiscoveryExtension({ bodyType: 'json', ...input, ...output })
    : declareDiscoveryExtension({ ...input, ...output });
  const enrich = bazaarResourceServerExtension.enrichDeclaration;
  const context = { method: card.http_method, adapter: undefined };
  const extension = declared[BAZAAR.key];
  return (enrich ? enrich(extension, context) : extension) as DiscoveryExtension;
}

/** Why the card's description would not pass the extension's validator, or undefined when it does. */
export function bazaarProblem(card: BazaarCard): string | undefined {
  const extension = bazaarOf(card);
  if (!extension) {
    return card.input_schema || card.input_example || card.output_schema || card.output_example
      ? 'Name the HTTP method before describing input or output.'
      : undefined;
  }
  const result = validateDiscoveryExtension(extension);
  return result.valid ? undefined : (result.errors ?? ['The description is not valid.']).join('; ');
}
