// Text placed in HTML: every character that could open a tag or end an attribute is escaped.

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
