// The types of build-inputs.mjs, for the tests that import it (test/support).
export declare const BUILD_INPUTS: readonly string[];
export declare const SHIPPED_AS_IS: readonly string[];
export declare const STAMP: string;
export declare function listFiles(path: string): string[];
export declare function hashOf(root: string, files: readonly string[]): string;
export declare function hashOfPaths(root: string, paths: readonly string[]): string;
export declare function writeStamp(out: string, inputs: string): void;
export declare function stampMismatch(root: string, out: string): string | undefined;
