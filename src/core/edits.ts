import { canonicalJson } from './canonical-json.ts';

// What an edit changed, the one rule every edit record uses (accounts, contacts): the fields
// given whose values differ from the ones held, each with its value before and after.

export type ChangedFields = Record<string, { from: unknown; to: unknown }>;

/**
 * Each field given (not undefined) whose value differs from the one held, with both; an edit is
 * recorded only when this is not empty. Values compare as canonical JSON, so objects (bank
 * requisites, addresses) compare by their content whatever the order of their keys.
 */
export function changedFields(held: Record<string, unknown>, given: Record<string, unknown>): ChangedFields {
  const changed: ChangedFields = {};
  for (const [field, to] of Object.entries(given)) {
    if (to === undefined) continue;
    const from = held[field] ?? null;
    if (canonicalJson(from) !== canonicalJson(to)) changed[field] = { from, to };
  }
  return changed;
}
