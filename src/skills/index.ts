/** Skill packages: the format, the loader and the bundled packages' location. */
export { bundledPackagesDir, loadPackage, loadPackages } from './loader.js';
export { REQUEST_TAG } from './package-schema.js';
export type { SkillPackage, WorkerSkill } from './package-schema.js';
