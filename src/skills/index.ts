/** Skill packages: the format, the loader and the bundled packages' location. */
export { bundledPackagesDir, loadPackage } from './loader.js';
export { loadPackages } from './load-packages.js';
export { REQUEST_TAG } from '../core/skills/package-schema.js';
export type { SkillPackage, WorkerSkill } from '../core/skills/package-schema.js';
