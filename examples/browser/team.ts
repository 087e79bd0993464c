/**
 * The app's own team and a scripted model standing in for the LLM: the manager proposes
 * the `noter` worker, the worker writes a note, the manager finishes. Shared by the page and
 * nothing else; an app with a real model would call its own backend here.
 */
import type { PackageInfo, SkillPromptLookup } from 'steward/machine';
import { ScriptedModel, scriptedCall } from 'steward/testing';

export const team: PackageInfo = {
  id: 'notes',
  title: 'Notes',
  description: 'Writes a note from the request.',
  workers: [{ id: 'noter', title: 'Noter', description: 'Writes the note.', inputTags: ['request'], outputTags: ['note'], roles: [] }],
};

export const promptOf: SkillPromptLookup = (_packageId, workerId) => (workerId === 'noter' ? 'Write a short note from the request.' : undefined);

export function scriptedModel(): ScriptedModel {
  return new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'noter', reason: 'Write the note.', requiresApproval: true })] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Otters hold hands while they sleep.' } })] },
    { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'The note is written.' })] },
  ]);
}
