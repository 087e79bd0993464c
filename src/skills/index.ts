/** Skill packages: the format, the loader and the bundled packages' location. */
export { bundledPackagesDir, loadPackage, loadPackages } from './loader.js';
export {
  ID_PATTERN,
  PackageManifestSchema,
  REQUEST_TAG,
  TAG_PATTERN,
  TagSchema,
  WorkerFrontMatterSchema,
} from './package-schema.js';
export type {
  PackageManifest,
  SkillPackage,
  WorkerFrontMatter,
  WorkerRole,
  WorkerSkill,
} from './package-schema.js';
