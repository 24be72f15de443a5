import { describe, expect, it } from 'vitest';
import { escapeAttribute, escapeText, XmlWriter } from './xml-writer.ts';

describe('the XML writer', () => {
  it('escapes markup in text, keeps a carriage return as a reference, and replaces what XML 1.0 cannot carry', () => {
    expect(escapeText('Müller & Søn <GmbH> "q" \'a\' ]]>')).toBe(
      'Müller &amp; Søn &lt;GmbH&gt; "q" \'a\' ]]&gt;',
    );
    expect(escapeText('a\r\nb\tc')).toBe('a&#13;\nb\tc');
    expect(escapeText('x\u0000y\u001Fz\uFFFE')).toBe('x\uFFFDy\uFFFDz\uFFFD');
    expect(escapeText('Smith &amp; Sons')).toBe('Smith &amp;amp; Sons');
    expect(escapeText('plain 漢 😀')).toBe('plain 漢 😀');
  });

  it('escapes quotes, tabs and line breaks in attribute values', () => {
    expect(escapeAttribute('a"b<c>&d\te\nf\rg')).toBe('a&quot;b&lt;c&gt;&amp;d&#9;e&#10;f&#13;g');
  });

  it('writes elements in the order they are written, indented, with the declaration first', () => {
    const xml = new XmlWriter();
    xml.element('r', { xmlns: 'urn:x', a: '1 & 2' }, () => {
      xml.leaf('b', 'B');
      xml.optionalLeaf('skipped', null);
      xml.element('c', () => xml.leaf('d', '<', { unit: 'C62' }));
      xml.empty('e');
    });
    expect(xml.toString()).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<r xmlns="urn:x" a="1 &amp; 2">\n\t<b>B</b>\n\t<c>\n\t\t<d unit="C62">&lt;</d>\n\t</c>\n\t<e/>\n</r>\n',
    );
  });

  it('refuses to hand out a document with an element left open', () => {
    const xml = new XmlWriter();
    expect(() =>
      xml.element('r', () => {
        xml.toString();
      }),
    ).toThrow(/left open/);
  });
});
