/**
 * `steward/machine` in a page: the session statechart runs in the browser with the app's
 * model behind `createManagerTurn` / `createWorkerTurn`; each wait renders the events the
 * machine's guards enable now as buttons (`enabledUserEvents`), and a click sends one.
 */
import { createActor } from 'xstate';
import {
  createManagerTurn,
  createWorkerTurn,
  enabledUserEvents,
  sessionMachine,
  sessionView,
  type SessionView,
  type UserEvent,
  type UserEventType,
} from 'steward/machine';
import { promptOf, scriptedModel, team } from './team.js';

const model = scriptedModel();
const machine = sessionMachine.provide({
  actors: { managerTurn: createManagerTurn(model), workerTurn: createWorkerTurn(model, promptOf) },
});
const actor = createActor(machine, { input: { sessionId: 'browser-1', package: team } });

/** The event a button sends, with what it needs from the view (a real app would ask the user). */
function eventFor(type: UserEventType, view: SessionView): UserEvent {
  switch (type) {
    case 'user_submitted_input':
      return { type, text: 'A short note about otters.' };
    case 'user_accepted_artifact':
      return { type, artifactId: view.artifact!.id };
    case 'user_rejected_artifact':
      return { type, artifactId: view.artifact!.id, reason: 'Shorter, please.' };
    case 'user_rejected_next_step':
      return { type, reason: 'Not now.' };
    case 'user_answered_questions':
      return { type, answers: {} };
    case 'user_selected_package':
      return { type, packageId: team.id };
    default:
      return { type };
  }
}

const $ = (id: string) => document.getElementById(id)!;

actor.subscribe((snapshot) => {
  const view = sessionView(snapshot);
  $('state').textContent = view.state;
  $('message').textContent = view.message ?? view.notice ?? '';
  $('board').textContent = view.blackboard.map((t) => `#${t.tag} v${t.version} by ${t.writtenBy}`).join('\n');
  const events = $('events');
  events.replaceChildren();
  // While a turn runs nothing is offered: the buttons appear when the session waits.
  if (view.phase !== 'waiting_user') return;
  for (const type of enabledUserEvents(snapshot)) {
    const button = document.createElement('button');
    button.textContent = type;
    button.dataset.event = type;
    button.onclick = () => actor.send(eventFor(type, view));
    events.append(button);
  }
});
actor.start();
