// Bundles the extension into dist/extension.js. The native addon (.node) is never bundled: the
// bootstrap loads it at run time from dist/native/ (where scripts/package.sh puts it) or from the
// in-repo npm/executor package during development.
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const options = {
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode', '*.node'],
  sourcemap: true,
  minify: !watch,
  logLevel: 'info',
};
// The OpenHands tab's page script: a browser bundle loaded by the webview with the CSP nonce.
const webview = {
  entryPoints: ['src/webview/main.ts'],
  bundle: true,
  outfile: 'dist/webview.js',
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  sourcemap: false,
  minify: !watch,
  logLevel: 'info',
};
// The present_review panel's page script (src/ide/reviewPanel.ts), same rules.
const review = { ...webview, entryPoints: ['src/webview/review.ts'], outfile: 'dist/review.js' };
if (watch) {
  for (const o of [options, webview, review]) await (await esbuild.context(o)).watch();
} else {
  await Promise.all([esbuild.build(options), esbuild.build(webview), esbuild.build(review)]);
}
