/**
 * Artifacts: one successful worker `submit` = the tag versions it wrote + its review status.
 * Statuses move only along LEGAL_ARTIFACT_MOVES; `moveArtifact` refuses anything else so a
 * bug shows up as an error, not as a silently corrupted history.
 */
import { InternalError } from '../errors.js';

export type ArtifactStatus = 'pending_review' | 'accepted' | 'rejected' | 'superseded';

export interface Question {
  id: string;
  text: string;
}

export interface Artifact {
  id: string;
  workerId: string;
  roleId?: string;
  /** tag → the version this artifact wrote. */
  tags: Record<string, number>;
  status: ArtifactStatus;
  /** Follow-up questions that ride along with the review; Accept dismisses them. */
  questions?: Question[];
  /** The rejected artifact this one revises. */
  revises?: string;
}

export const LEGAL_ARTIFACT_MOVES: Readonly<Record<ArtifactStatus, readonly ArtifactStatus[]>> = {
  pending_review: ['accepted', 'rejected'],
  rejected: ['superseded'],
  accepted: [],
  superseded: [],
};

export function moveArtifact(artifact: Artifact, to: ArtifactStatus): void {
  if (!LEGAL_ARTIFACT_MOVES[artifact.status].includes(to)) {
    throw new InternalError(`Artifact ${artifact.id} cannot move from ${artifact.status} to ${to}.`);
  }
  artifact.status = to;
}

export function nextArtifactId(artifacts: readonly Artifact[]): string {
  return `a${artifacts.length + 1}`;
}

export function toQuestions(texts: readonly string[]): Question[] {
  return texts.map((text, i) => ({ id: `q${i + 1}`, text }));
}
