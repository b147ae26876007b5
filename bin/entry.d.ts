// Types of bin/entry.js (plain JavaScript: it runs before anything is compiled) for the TypeScript
// that imports it (bench/, test/).

/** The stamp `npm run build` writes into dist/ once every file is emitted. */
export declare const BUILD_STAMP: string;

/**
 * Picks what `bin/msgsvc.js` loads below the project root `root`: 'dist' when the build is newer
 * than every file in src/ (and MSGSVC_FROM_SOURCE is not 1), else 'src'. `stale`: a build exists
 * but src/ changed since.
 */
export declare function chooseEntry(root: string, env?: NodeJS.ProcessEnv): { entry: 'dist' | 'src'; stale: boolean };
