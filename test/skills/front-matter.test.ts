/**
 * The split of a worker file into front matter and prompt. The expected values are what
 * gray-matter 4.0.3 gave for the same files (the loader used it before), so packages written
 * then read the same now.
 */
import { describe, expect, it } from 'vitest';
import { splitFrontMatter } from '../../src/skills/front-matter.js';

describe('splitFrontMatter', () => {
  it('cuts at the opening and closing "---" lines; one line end after the closing one belongs to it', () => {
    expect(splitFrontMatter('---\nid: a\n---\n\nYou write.\n')).toEqual({ language: '', matter: '\nid: a', body: '\nYou write.\n', isEmpty: false });
  });

  it('reads CRLF line ends', () => {
    expect(splitFrontMatter('---\r\nid: a\r\n---\r\nYou write.\r\n')).toEqual({ language: '', matter: '\r\nid: a\r', body: 'You write.\r\n', isEmpty: false });
  });

  it('names the language written after the opening "---", trimmed', () => {
    expect(splitFrontMatter('--- YML \r\nid: a\n---\nb')).toMatchObject({ language: 'YML', matter: '\r\nid: a', body: 'b' });
    expect(splitFrontMatter('---js\n{}\n---\nb')).toMatchObject({ language: 'js', matter: '\n{}' });
  });

  it('closes at the first line that starts with "---", even "----" or "---x"', () => {
    expect(splitFrontMatter('---\nid: a\n----\nb')).toMatchObject({ matter: '\nid: a', body: '-\nb' });
    expect(splitFrontMatter('---\nid: a\n---\nb\n---\nc')).toMatchObject({ matter: '\nid: a', body: 'b\n---\nc' });
  });

  it('without a closing line, the front matter is all the rest and the prompt is empty', () => {
    expect(splitFrontMatter('---\nid: a\nYou write.\n')).toEqual({ language: '', matter: '\nid: a\nYou write.\n', body: '', isEmpty: false });
  });

  it('front matter of blank lines and comments only is empty (read as no fields)', () => {
    expect(splitFrontMatter('---\n  # a comment\n\n---\nb')).toMatchObject({ isEmpty: true, body: 'b' });
    expect(splitFrontMatter('---\n---\nb')).toMatchObject({ isEmpty: true, matter: '', body: 'b' });
  });

  it('a file that does not start with "---" has none', () => {
    expect(splitFrontMatter('id: a\n---\nb')).toBeUndefined();
    expect(splitFrontMatter(' ---\nid: a\n---\nb')).toBeUndefined();
  });
});
