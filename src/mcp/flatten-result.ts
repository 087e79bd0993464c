/**
 * A tool's result as text for a model: text parts as they are, every other part described in a
 * line (an image's type and size, a link's name and address), so the model knows it is there
 * without its bytes. Bounded: past `maxChars` the text is cut and says so.
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';

/**
 * The result's content as one text, at most `maxChars` long.
 *
 * @example
 * flattenResult({ content: [{ type: 'text', text: 'a chart:' }, { type: 'image', data: 'iVBO', mimeType: 'image/png' }] }, 64_000);
 * // { text: 'a chart:\n[image: image/png, 3 bytes]', truncated: false }
 */
export function flattenResult(result: CallToolResult, maxChars: number): { text: string; truncated: boolean } {
  const parts = result.content.map(describe);
  // A tool with only structured output: its JSON is the text (servers should send both).
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  if (text.length <= maxChars) return { text, truncated: false };
  const note = `\n[… cut: the result has ${text.length} characters, only the first ${maxChars} are shown. Ask the tool for less, e.g. a narrower query or a page.]`;
  return { text: text.slice(0, Math.max(0, maxChars - note.length)) + note, truncated: true };
}

/** Bytes of base64 data, without decoding it. */
const base64Bytes = (data: string) => Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);

function describe(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case 'resource_link':
      return `[resource link: ${block.name} <${block.uri}>${block.mimeType ? ` (${block.mimeType})` : ''}]`;
    case 'resource': {
      const { resource } = block;
      if ('text' in resource && typeof resource.text === 'string') return `[resource <${resource.uri}>]\n${resource.text}`;
      const bytes = 'blob' in resource && typeof resource.blob === 'string' ? `, ${base64Bytes(resource.blob)} bytes` : '';
      return `[resource <${resource.uri}>${resource.mimeType ? ` (${resource.mimeType}${bytes})` : bytes}]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}
