/** The token list of `steward serve` (STEWARD_TOKENS_FILE / STEWARD_TOKENS): each problem names its line and the fix, never the token. */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkNamedTokens, parseTokenList, TokenListError, tokensFromEnv } from '../../src/http/tokens.js';
import { useTempDir } from '../support/temp.js';

const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const tmp = useTempDir('steward-tokens-');

function problems(text: string, semicolons = false): string[] {
  try {
    parseTokenList(text, 'STEWARD_TOKENS_FILE t', { semicolons });
  } catch (error) {
    expect(error).toBeInstanceOf(TokenListError);
    return (error as TokenListError).problems.map((p) => `${p.line}: ${p.message}`);
  }
  throw new Error('parsed');
}

describe('parseTokenList', () => {
  it('reads names, tokens and act-for-others; skips blank lines and # comments', () => {
    expect(parseTokenList(`# name token\n\nalice ${A}\r\n  ci.bot@example\t${B}   act-for-others  \n`, 'x')).toEqual([
      { name: 'alice', token: A, actForOthers: false },
      { name: 'ci.bot@example', token: B, actForOthers: true },
    ]);
    expect(parseTokenList(`alice ${A};bob ${B}`, 'x', { semicolons: true }).map((t) => t.name)).toEqual(['alice', 'bob']);
  });

  it('names each bad line and its fix', () => {
    const found = problems(
      [
        `alice ${A}`,
        'bob short',
        `alice ${B}`,
        `carol ${A}`,
        `Steward ${'c'.repeat(20)}`,
        `dan!x ${'d'.repeat(20)}`,
        `erin ${'e'.repeat(20)} admin`,
        'frank',
        `gina ${'g'.repeat(19)}!`,
      ].join('\n'),
    );
    expect(found).toEqual([
      '2: the token is too short to be a secret: use at least 16 characters (e.g. `openssl rand -hex 24`)',
      '3: the name "alice" is on line 1 already: give each token its own name',
      '4: the token of line 1 again: give each name its own token, or one name could pass for another',
      "5: the name is reserved (steward, system are the journal's names for the runtime): name the person or service that holds the token",
      '6: the name may use letters, digits and . _ @ - (starting with a letter or digit), e.g. alice or ci-bot',
      '7: the options after the token are "act-for-others" and "groups=NAME,NAME" (e.g. groups=ops,admin)',
      '8: a name without a token: write "name token" (separated by a space)',
      '9: the token may use letters, digits and . _ ~ + / - (and = at its end), as `openssl rand -hex 24` or `openssl rand -base64 24` print',
    ]);
  });

  it('reads groups=NAME,NAME after the token, beside act-for-others, and names each bad groups field and its fix', () => {
    expect(parseTokenList(`olga ${A} groups=ops,admin\nci ${B} act-for-others groups=bots`, 'x')).toEqual([
      { name: 'olga', token: A, actForOthers: false, groups: ['ops', 'admin'] },
      { name: 'ci', token: B, actForOthers: true, groups: ['bots'] },
    ]);
    const found = problems(
      [
        `a1 ${'1'.repeat(20)} groups=`,
        `a2 ${'2'.repeat(20)} groups=ops,,qa`,
        `a3 ${'3'.repeat(20)} groups=ops groups=qa`,
        `a4 ${'4'.repeat(20)} groups=ops,ops`,
        `a5 ${'5'.repeat(20)} groups=o!ps`,
        `a6 ${'6'.repeat(20)} groups=${Array.from({ length: 65 }, (_, i) => `g${i}`).join(',')}`,
      ].join('\n'),
    );
    expect(found).toEqual([
      '1: a group name is empty (two commas in a row, or one at an end): write groups=NAME,NAME, e.g. groups=ops,admin',
      '2: a group name is empty (two commas in a row, or one at an end): write groups=NAME,NAME, e.g. groups=ops,admin',
      '3: give "groups=" at most once: list every group in it, e.g. groups=ops,admin',
      '4: the group "ops" is listed twice in groups=: list each group once',
      '5: a group name may use letters, digits and . _ @ - (starting with a letter or digit), e.g. groups=ops,admin',
      '6: groups= lists 65 groups; a caller may be in at most 64',
    ]);
    // As objects (startServe({ tokens })): a comma inside a group's name is refused, never split into two groups.
    expect(() => checkNamedTokens([{ name: 'olga', token: A, actForOthers: false, groups: ['ops,admin'] }], 'tokens')).toThrow(
      /entry 1: a group name may use letters/,
    );
    expect(checkNamedTokens([{ name: 'olga', token: A, actForOthers: false, groups: ['ops'] }], 'tokens')).toEqual([
      { name: 'olga', token: A, actForOthers: false, groups: ['ops'] },
    ]);
  });

  it('says "entry" for STEWARD_TOKENS, keeps tokens out of messages, and refuses an empty list', () => {
    let message = '';
    try {
      parseTokenList(`alice ${A}; bob tooshortsecret`, 'STEWARD_TOKENS', { semicolons: true });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('STEWARD_TOKENS is not a valid token list:\n  entry 2: the token is too short');
    expect(message).toContain('Each line is "name token" or "name token act-for-others"');
    expect(message).not.toContain('tooshortsecret');
    expect(() => parseTokenList('# nobody yet\n', 'STEWARD_TOKENS_FILE t')).toThrow(
      'STEWARD_TOKENS_FILE t has no tokens: add a line "name token" for each caller',
    );
  });
});

describe('tokensFromEnv', () => {
  it('takes one of STEWARD_TOKENS_FILE, STEWARD_TOKENS and STEWARD_TOKEN', () => {
    const file = tmp.path('tokens');
    writeFileSync(file, `alice ${A}\n`);
    expect(tokensFromEnv({ STEWARD_TOKENS_FILE: file })).toEqual({ kind: 'named', tokens: [{ name: 'alice', token: A, actForOthers: false }] });
    expect(tokensFromEnv({ STEWARD_TOKENS: `bob ${B}` })).toEqual({ kind: 'named', tokens: [{ name: 'bob', token: B, actForOthers: false }] });
    expect(tokensFromEnv({ STEWARD_TOKEN: ` ${A} ` })).toEqual({ kind: 'shared', token: A });
    expect(tokensFromEnv({ STEWARD_TOKEN: '' })).toEqual({ kind: 'none' });
    expect(() => tokensFromEnv({ STEWARD_TOKENS: `bob ${B}`, STEWARD_TOKEN: A })).toThrow('STEWARD_TOKENS and STEWARD_TOKEN are both set: set one of them');
    expect(() => tokensFromEnv({ STEWARD_TOKENS_FILE: '/nowhere', STEWARD_TOKENS: `bob ${B}`, STEWARD_TOKEN: A })).toThrow(
      'STEWARD_TOKENS_FILE, STEWARD_TOKENS and STEWARD_TOKEN are all set: set one of them',
    );
    expect(() => tokensFromEnv({ STEWARD_TOKENS_FILE: tmp.path('missing') })).toThrow(/STEWARD_TOKENS_FILE .*missing cannot be read \(ENOENT\)/);
    writeFileSync(file, `alice ${A}\nalice ${B}\n`);
    expect(() => tokensFromEnv({ STEWARD_TOKENS_FILE: file })).toThrow(
      `STEWARD_TOKENS_FILE ${file} is not a valid token list:\n  line 2: the name "alice" is on line 1 already`,
    );
  });
});
