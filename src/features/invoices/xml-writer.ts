// A small XML writer for the e-invoices: elements are written in the order the caller writes
// them (the serializers follow each schema's sequence), text and attribute values are escaped,
// and characters XML 1.0 cannot carry become U+FFFD. No DOM and no sorting: one pass, one string.

/** Characters XML 1.0 forbids (C0 controls but tab, newline and carriage return; U+FFFE, U+FFFF). */
const FORBIDDEN = '\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF';

// A carriage return is written as a reference: a parser turns a literal one into a newline.
const TEXT_SPECIAL = new RegExp(`[&<>\\r${FORBIDDEN}]`, 'g');
// In an attribute a parser also turns a literal tab or newline into a space.
const ATTRIBUTE_SPECIAL = new RegExp(`[&<>"\\t\\n\\r${FORBIDDEN}]`, 'g');

const REFERENCES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

const reference = (char: string) => REFERENCES[char] ?? '\uFFFD';

/** Text as element content. */
export function escapeText(text: string): string {
  TEXT_SPECIAL.lastIndex = 0;
  return TEXT_SPECIAL.test(text) ? text.replace(TEXT_SPECIAL, reference) : text;
}

/** Text as an attribute value in double quotes. */
export function escapeAttribute(text: string): string {
  ATTRIBUTE_SPECIAL.lastIndex = 0;
  return ATTRIBUTE_SPECIAL.test(text) ? text.replace(ATTRIBUTE_SPECIAL, reference) : text;
}

export type XmlAttributes = Readonly<Record<string, string>>;

function startTag(name: string, attributes: XmlAttributes | undefined): string {
  let tag = `<${name}`;
  if (attributes !== undefined) {
    for (const key in attributes) tag += ` ${key}="${escapeAttribute(attributes[key] ?? '')}"`;
  }
  return tag;
}

/**
 * Writes one document, indented with a tab a level. Element and attribute names are the
 * serializers' constants and are written as they are; only values are escaped.
 */
export class XmlWriter {
  readonly #parts: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  #depth = 0;

  #indent(): string {
    return `\n${'\t'.repeat(this.#depth)}`;
  }

  /** An element whose children `body` writes. */
  element(name: string, body: () => void): void;
  element(name: string, attributes: XmlAttributes, body: () => void): void;
  element(name: string, second: XmlAttributes | (() => void), third?: () => void): void {
    const attributes = typeof second === 'function' ? undefined : second;
    const body = typeof second === 'function' ? second : third;
    if (body === undefined) throw new Error('bug: an XML element without a body');
    this.#parts.push(this.#indent(), startTag(name, attributes), '>');
    this.#depth += 1;
    body();
    this.#depth -= 1;
    this.#parts.push(this.#indent(), `</${name}>`);
  }

  /** An element holding text. */
  leaf(name: string, text: string, attributes?: XmlAttributes): void {
    this.#parts.push(this.#indent(), startTag(name, attributes), '>', escapeText(text), `</${name}>`);
  }

  /** An element holding text, when there is text (null writes nothing). */
  optionalLeaf(name: string, text: string | null, attributes?: XmlAttributes): void {
    if (text !== null) this.leaf(name, text, attributes);
  }

  /** An element with no content. */
  empty(name: string): void {
    this.#parts.push(this.#indent(), `<${name}/>`);
  }

  /** The document, ending with a newline. */
  toString(): string {
    if (this.#depth !== 0) throw new Error('bug: an XML document with an element left open');
    return `${this.#parts.join('')}\n`;
  }
}
