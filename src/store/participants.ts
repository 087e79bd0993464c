/**
 * Who a session belongs to, as the store keeps it: its `owner` (the name of the caller who
 * created it, or null when no named caller did: the CLI, a shared token, a server without
 * tokens) and its `participants`, people by name and groups as `group:NAME`, who see and
 * decide it too (src/http/access.ts has the rule). zod and nothing of Node: the routes, the
 * runtime and the stores check the same bounds.
 */
import * as z from 'zod';
import { CONTROL_OR_INVISIBLE } from '../core/text/names.js';
import { GroupNameSchema } from '../core/machines/deadlines.js';

export { GroupNameSchema, MAX_CALLER_GROUPS, MAX_GROUP_NAME_CHARS } from '../core/machines/deadlines.js';

/** How a participant names a group rather than a person: `group:ops`. */
export const GROUP_PREFIX = 'group:';
/** Participants a session may name, at most (people and groups together). */
export const MAX_PARTICIPANTS = 50;
/** The longest caller name (a token's name is at most 64; an app's own authentication may use longer ids). */
export const MAX_CALLER_NAME_CHARS = 200;

const visible = (value: string) => !CONTROL_OR_INVISIBLE.test(value) && value.trim() === value;

/** A caller's name as a session records it (owner, participant): 1 to 200 characters, no control or invisible ones, no spaces around. */
export const CallerNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_CALLER_NAME_CHARS, `must be at most ${MAX_CALLER_NAME_CHARS} characters`)
  .refine(visible, 'must have no control or invisible characters, and no spaces at its ends');

/** One participant: a person's name, or `group:NAME`. */
export const ParticipantSchema = z.string().check((ctx) => {
  const value = ctx.value;
  const group = value.startsWith(GROUP_PREFIX);
  const parsed = group ? GroupNameSchema.safeParse(value.slice(GROUP_PREFIX.length)) : CallerNameSchema.safeParse(value);
  if (!parsed.success)
    ctx.issues.push({
      code: 'custom',
      input: value,
      message: group ? `a group's name ${parsed.error.issues[0]!.message}` : `a person's name ${parsed.error.issues[0]!.message}`,
    });
});

/** A session's participants: names and `group:NAME`s, at most MAX_PARTICIPANTS; each kept once, in the order given. */
export const ParticipantsSchema = z
  .array(ParticipantSchema)
  .max(MAX_PARTICIPANTS, `at most ${MAX_PARTICIPANTS} participants (name a group, group:NAME, for more people)`)
  .transform((list) => [...new Set(list)])
  .describe(`people (their names) and groups (group:NAME) who see and decide the session besides its owner; at most ${MAX_PARTICIPANTS}`);

/**
 * What a session is shown to, as a store filters `list()` by it: the sessions `owner` owns
 * and those whose participants include one of `participants` (the caller's name and its
 * groups as `group:NAME`).
 */
export interface ListAccess {
  owner: string;
  participants: readonly string[];
}

/**
 * A caller's `list()` filter: its own sessions, and those naming it or one of its groups.
 *
 * @example
 * await store.list({ visibleTo: visibleTo('alice', ['ops']) }); // owner alice, or participants alice / group:ops
 */
export function visibleTo(name: string, groups: readonly string[] = []): ListAccess {
  return { owner: name, participants: [name, ...groups.map((g) => `${GROUP_PREFIX}${g}`)] };
}
