/**
 * A React component on Steward's machine: `useMachine` from @xstate/react runs the
 * statechart (with the app's model behind the turns), and the component renders the state,
 * the manager's message and the events the guards enable now, as buttons.
 */
import { useMachine } from '@xstate/react';
import {
  createManagerTurn,
  createWorkerTurn,
  enabledUserEvents,
  sessionMachine,
  sessionView,
  type Model,
  type PackageInfo,
  type SkillPromptLookup,
  type UserEvent,
  type UserEventType,
  type SessionView,
} from 'steward/machine';
import { useMemo } from 'react';

export interface SessionProps {
  model: Model;
  team: PackageInfo;
  promptOf: SkillPromptLookup;
  /** What the user typed as the first request. */
  request: string;
}

function eventFor(type: UserEventType, view: SessionView, props: SessionProps): UserEvent {
  switch (type) {
    case 'user_submitted_input':
      return { type, text: props.request };
    case 'user_accepted_artifact':
      return { type, artifactId: view.artifact!.id };
    case 'user_rejected_artifact':
      return { type, artifactId: view.artifact!.id, reason: 'Shorter, please.' };
    case 'user_rejected_next_step':
      return { type, reason: 'Not now.' };
    case 'user_answered_questions':
      return { type, answers: {} };
    case 'user_selected_package':
      return { type, packageId: props.team.id };
    default:
      return { type };
  }
}

export function Session(props: SessionProps) {
  const machine = useMemo(
    () => sessionMachine.provide({ actors: { managerTurn: createManagerTurn(props.model), workerTurn: createWorkerTurn(props.model, props.promptOf) } }),
    [props.model, props.promptOf],
  );
  const [snapshot, send] = useMachine(machine, { input: { sessionId: 'react-1', package: props.team } });
  const view = sessionView(snapshot);
  const enabled = view.phase === 'waiting_user' ? enabledUserEvents(snapshot) : [];
  return (
    <section>
      <p>
        State: <code data-testid="state">{view.state}</code>
      </p>
      {view.message ? <p>{view.message}</p> : null}
      <div data-testid="events">
        {enabled.map((type) => (
          <button key={type} data-event={type} onClick={() => send(eventFor(type, view, props))}>
            {type}
          </button>
        ))}
      </div>
      <ul data-testid="board">
        {view.blackboard.map((t) => (
          <li key={`${t.tag}@${t.version}`}>
            #{t.tag} v{t.version} by {t.writtenBy}
          </li>
        ))}
      </ul>
    </section>
  );
}
