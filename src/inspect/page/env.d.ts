/** Vite's `?url` imports (the page bundles elkjs's worker script as an asset). */
declare module '*?url' {
  const url: string;
  export default url;
}
