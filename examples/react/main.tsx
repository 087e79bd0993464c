import { createRoot } from 'react-dom/client';
import { Session } from './Session.js';
import { promptOf, scriptedModel, team } from './team.js';

createRoot(document.getElementById('root')!).render(<Session model={scriptedModel()} team={team} promptOf={promptOf} request="A short note about otters." />);
